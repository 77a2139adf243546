import test from "ava";
import fc from "fast-check";
import { compactReference, findReference, foldTurkish, jaroWinkler, nameSimilarity, nameTokens, normalizeName, normalizeText, turkishLower } from "../src/turkish-text.js";

const table = <I, O>(name: string, fn: (input: I) => O, rows: ReadonlyArray<readonly [I, O]>) => {
  test(name, (t) => {
    for (const [input, expected] of rows) t.deepEqual(fn(input), expected, JSON.stringify(input));
  });
};

table("tr-TR lower case: I is the capital of ı, İ of i", turkishLower, [
  ["I", "ı"],
  ["İ", "i"],
  ["ı", "ı"],
  ["i", "i"],
  ["ISPARTA", "ısparta"],
  ["İSTANBUL", "istanbul"],
  ["I\u0307", "i"], // a decomposed İ
] as const);

table("folding: each Turkish diacritic compares equal to its plain letter", foldTurkish, [
  ["ş", "s"], ["Ş", "s"],
  ["ğ", "g"], ["Ğ", "g"],
  ["ü", "u"], ["Ü", "u"],
  ["ö", "o"], ["Ö", "o"],
  ["ç", "c"], ["Ç", "c"],
  ["ı", "i"], ["I", "i"], ["İ", "i"], ["i", "i"],
  ["â", "a"], ["î", "i"], ["û", "u"],
  ["ŞÜKRÜ ÇAĞLAR ÖZIŞIK", "sukru caglar ozisik"],
  ["İSMAİL", "ismail"], ["ISMAIL", "ismail"], ["ısmaıl", "ismail"],
] as const);

table("normalizeText: punctuation is a separator, apostrophes join, whitespace collapses", normalizeText, [
  ["  YILMAZ,  Ayşe-Nur ", "yilmaz ayse nur"],
  ["Ayşe'nin", "aysenin"],
  ["O’Neil", "oneil"],
  ["a\t\n b", "a b"],
  ["Ödeme/ref:K7M2.QX9P!", "odeme ref k7m2 qx9p"],
  ["", ""],
  ["...", ""],
  ["ﬁliz", "filiz"], // compatibility ligature
] as const);

table("normalizeName: company suffixes are ignored in every usual spelling", normalizeName, [
  ["ABC Tekstil A.Ş.", "abc tekstil"],
  ["ABC Tekstil AŞ", "abc tekstil"],
  ["ABC Tekstil A.S.", "abc tekstil"],
  ["ABC Tekstil A. Ş.", "abc tekstil"],
  ["ABC Tekstil Ltd.", "abc tekstil"],
  ["ABC Tekstil Ltd. Şti.", "abc tekstil"],
  ["ABC Tekstil LTD.ŞTİ.", "abc tekstil"],
  ["ABC Tekstil LTDŞTİ", "abc tekstil"],
  ["ABC Tekstil STI", "abc tekstil"],
  ["ABC TEKSTİL SAN. VE TİC. LTD. ŞTİ.", "abc tekstil"],
  ["ABC Tekstil Sanayi ve Ticaret Limited Şirketi", "abc tekstil"],
  ["ABC TEKSTİL ANONİM ŞİRKETİ", "abc tekstil"],
  ["ABC İth. İhr. Koll. Şti.", "abc"],
  ["ABC Kooperatifi", "abc"],
  ["ABC GmbH", "abc"],
  ["A. Yılmaz", "a yilmaz"], // an initial is not "A.Ş."
  ["Ltd. Şti.", "ltd sti"], // nothing but suffixes: kept rather than empty
] as const);

test("name tokens are the normalised words without suffixes", (t) => {
  t.deepEqual(nameTokens("YILMAZ AYŞE"), ["yilmaz", "ayse"]);
  t.deepEqual(nameTokens("   "), []);
});

test("Jaro-Winkler reference values", (t) => {
  t.is(jaroWinkler("", ""), 1);
  t.is(jaroWinkler("abc", ""), 0);
  t.is(jaroWinkler("abc", "xyz"), 0);
  t.is(Math.round(jaroWinkler("martha", "marhta") * 1000), 961);
  t.is(Math.round(jaroWinkler("dwayne", "duane") * 1000), 840);
  t.true(jaroWinkler("yilmaz", "yilmas") > 0.9);
  t.true(jaroWinkler("mehmet", "mahmut") < 0.88);
});

const sim = (a: string, b: string) => Math.round(nameSimilarity(a, b) * 1000) / 1000;

table("nameSimilarity examples", ([a, b]: readonly [string, string]) => sim(a, b), [
  [["Ayşe Yılmaz", "Ayşe Yılmaz"], 1],
  [["YILMAZ AYŞE", "Ayşe Yılmaz"], 1],
  [["Ayse Yilmaz", "Ayşe Yılmaz"], 1],
  [["AYŞE YILMAZ", "ayşe yılmaz"], 1],
  [["İSMAİL ÇAĞLAR", "Ismail Caglar"], 1],
  [["ISMAIL CAGLAR", "İsmail Çağlar"], 1],
  [["yılmaz, ayşe", "Ayşe Yılmaz"], 1],
  [["AYŞENUR YILMAZ", "Ayşe Nur Yılmaz"], 1],
  [["ABC TEKSTİL SAN. VE TİC. LTD. ŞTİ.", "Abc Tekstil A.Ş."], 1],
  [["Ayşe Nur Yılmaz", "Ayşe Yılmaz"], 0.9],
  [["Ayşe", "Ayşe Yılmaz"], 0.833],
  [["Ayşe Demir", "Ayşe Yılmaz"], 0.5],
  [["A. Yılmaz", "Ayşe Yılmaz"], 0.5],
  [["Mehmet Yılmaz", "Mahmut Yılmaz"], 0.5],
  [["Mehmet Kaya", "Ali Demir"], 0],
  [["XYZ Gıda Ltd. Şti.", "ABC Tekstil Ltd. Şti."], 0],
  [["", "Ayşe Yılmaz"], 0],
  [["", ""], 0],
] as const);

test("one typo in a name still scores above the matching threshold", (t) => {
  t.true(nameSimilarity("Ayse Yilmas", "Ayşe Yılmaz") > 0.95);
});

table("compactReference", compactReference, [
  ["ref: ab-cd 23.45", "REFABCD2345"],
  ["k7m2/qx9p", "K7M2QX9P"],
  ["şığ", "SIG"],
] as const);

table("findReference: anywhere in the text, whatever the separators, case or Turkish letters", ([d, r]: readonly [string, string]) => findReference(d, r), [
  [["K7M2QX9P", "K7M2QX9P"], true],
  [["Ödeme ref: k7m2-qx9p teşekkürler", "K7M2QX9P"], true],
  [["ref: ab-cd 23 45", "ABCD2345"], true],
  [["K7M2 QX9P", "K7M2QX9P"], true],
  [["k7m2.qx9p", "K7M2QX9P"], true],
  [["K-7-M-2-Q-X-9-P", "K7M2QX9P"], true],
  [["havale K7M2QX9Pabc", "K7M2QX9P"], true],
  [["ref ıjkl2345", "IJKL2345"], true], // "ı" typed for "I"
  [["ref İJKL2345", "IJKL2345"], true],
  [["K7M2QX9", "K7M2QX9P"], false],
  [["K7M2QX9Q", "K7M2QX9P"], false],
  [["anything", ""], false],
  [["", "K7M2QX9P"], false],
] as const);

const trLetters = [..."abcçdefgğhıijklmnoöprsştuüvyz"];
const word = fc.array(fc.constantFrom(...trLetters), { minLength: 2, maxLength: 9 }).map((cs) => cs.join(""));
const name = fc.uniqueArray(word, { minLength: 1, maxLength: 4, selector: (w) => normalizeText(w) });

test("property: normalisation is idempotent", (t) => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), fc.string({ unit: "binary", maxLength: 30 }), (a, b) => {
      for (const s of [a, b, a + " " + trLetters.join("").toLocaleUpperCase("tr-TR")]) {
        if (normalizeText(normalizeText(s)) !== normalizeText(s)) return false;
        if (normalizeName(normalizeName(s)) !== normalizeName(s)) return false;
        if (compactReference(compactReference(s)) !== compactReference(s)) return false;
      }
      return true;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test("property: nameSimilarity is symmetric and in [0,1]", (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (a, b) => {
      const s = nameSimilarity(a, b);
      return s === nameSimilarity(b, a) && s >= 0 && s <= 1;
    }),
  );
  fc.assert(
    fc.property(name, name, (a, b) => nameSimilarity(a.join(" "), b.join(" ")) === nameSimilarity(b.join(" "), a.join(" "))),
  );
  t.pass();
});

const stripDiacritics = (s: string) => s.replace(/ş/g, "s").replace(/ğ/g, "g").replace(/ü/g, "u").replace(/ö/g, "o").replace(/ç/g, "c").replace(/ı/g, "i");

test("property: a name scores 1 against a case, diacritic and order variant of itself", (t) => {
  fc.assert(
    fc.property(name, fc.func(fc.integer()), fc.constantFrom("tr-TR", "en-US"), fc.boolean(), fc.boolean(), (tokens, key, locale, upper, plain) => {
      const shuffled = [...tokens].sort((x, y) => key(x) - key(y) || (x < y ? -1 : 1));
      let variant = shuffled.join("  ");
      if (plain) variant = stripDiacritics(variant);
      if (upper) variant = variant.toLocaleUpperCase(locale);
      return nameSimilarity(tokens.join(" "), variant) === 1;
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

test("property: a reference is found inside any text, however it is spaced or cased", (t) => {
  const refChar = fc.constantFrom(..."23456789ABCDEFGHJKMNPQRSTUVWXYZ");
  fc.assert(
    fc.property(fc.array(refChar, { minLength: 8, maxLength: 8 }), fc.array(fc.constantFrom("", " ", "-", ".", "/"), { minLength: 8, maxLength: 8 }), fc.string(), fc.string(), fc.boolean(), (chars, seps, before, after, lower) => {
      const reference = chars.join("");
      let written = chars.map((c, i) => c + seps[i]).join("");
      if (lower) written = written.toLocaleLowerCase("tr-TR");
      return findReference(`${before} ${written} ${after}`, reference);
    }),
  );
  t.pass();
});
