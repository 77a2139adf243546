/**
 * Turkish-aware text comparison for matching bank transfers to deposits.
 *
 * Why this exists: the same person reaches us spelled many ways. The bank statement says
 * "YILMAZ AYŞE" (upper case, surname first), the checkout form says "Ayşe Yılmaz", a
 * customer on an English keyboard types "Ayse Yilmaz", a company pays as "ABC TEKSTİL SAN.
 * VE TİC. LTD. ŞTİ.". Plain `toLowerCase()` gets Turkish wrong ("I" is the capital of "ı",
 * "İ" the capital of "i"), so everything here folds with the tr-TR locale first and only then
 * drops the diacritics, so that ş~s, ğ~g, ü~u, ö~o, ç~c and ı~i~İ~I compare equal.
 *
 * All functions are pure and total (any string in, no throw).
 */

/** tr-TR lower case: "I" → "ı", "İ" → "i" (after NFKC, so a decomposed "İ" behaves too). */
export function turkishLower(text: string): string {
  return text.normalize("NFKC").toLocaleLowerCase("tr-TR");
}

/**
 * tr-TR lower case with the diacritics dropped: "İSMAİL", "ISMAIL", "Ismail" and "ısmaıl" all
 * give "ismail"; "ŞÜKRÜ ÇAĞLAR ÖZ" gives "sukru caglar oz". The dotless "ı" has no Unicode
 * decomposition, hence the explicit map; every other mark (ş ğ ü ö ç â î û, a stray combining
 * dot) goes with the combining marks. Punctuation and spaces are kept (see normalizeText).
 */
export function foldTurkish(text: string): string {
  return turkishLower(text)
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/ı/g, "i")
    .toLocaleLowerCase("tr-TR")
    .normalize("NFC");
}

/**
 * The comparison form of free text: folded (foldTurkish), apostrophes dropped (Turkish writes
 * "Ayşe'nin", "O'Neil": one word), every other non-letter non-digit a separator, whitespace
 * collapsed, trimmed. "  YILMAZ,  Ayşe-Nur " → "yilmaz ayse nur". Idempotent.
 */
export function normalizeText(text: string): string {
  return foldTurkish(text)
    .replace(/['’‘`´]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/**
 * Words of a name that say what kind of business it is, not who: ignored when comparing names,
 * so "ABC Tekstil San. ve Tic. Ltd. Şti." compares equal to "ABC Tekstil" and "ABC TEKSTİL
 * A.Ş.". Listed in their normalised form (normalizeText of the written forms):
 * - legal forms: A.Ş./AŞ/A.S. (anonim şirketi), Ltd./Ltd. Şti. (limited şirketi), Şti.,
 *   Koll. (kollektif), Kom. (komandit), Koop. (kooperatif), plus the foreign Inc/LLC/GmbH/Co;
 * - the generic activity words nearly every Turkish company name carries: San./Sanayi,
 *   Tic./Ticaret, İth./İthalat, İhr./İhracat, and "ve" (and) between them.
 * Deliberately not listed: words that tell companies apart ("Tekstil", "Gıda", "İnşaat").
 * Single-letter forms ("a" "s" from "A.Ş.") are only removed as that exact sequence, so an
 * initial ("A. Yılmaz") survives.
 */
export const COMPANY_SUFFIXES: readonly (readonly string[])[] = [
  ["a", "s"],
  ["as"],
  ["anonim"],
  ["limited"],
  ["ltd"],
  ["ltdsti"],
  ["sti"],
  ["sirketi"],
  ["sirket"],
  ["kollektif"],
  ["koll"],
  ["komandit"],
  ["kom"],
  ["kooperatifi"],
  ["koop"],
  ["sanayi"],
  ["sanayii"],
  ["san"],
  ["ticaret"],
  ["tic"],
  ["ithalat"],
  ["ith"],
  ["ihracat"],
  ["ihr"],
  ["ve"],
  ["inc"],
  ["llc"],
  ["gmbh"],
  ["co"],
];

/** Removes every COMPANY_SUFFIXES sequence, repeated until none is left (so it is idempotent). */
function stripSuffixes(tokens: readonly string[]): string[] {
  let current = [...tokens];
  for (;;) {
    const next: string[] = [];
    for (let i = 0; i < current.length; ) {
      const suffix = COMPANY_SUFFIXES.find((s) => s.every((word, k) => current[i + k] === word));
      if (suffix) i += suffix.length;
      else next.push(current[i++]!);
    }
    if (next.length === current.length) return next;
    current = next;
  }
}

/**
 * The words of a name as compared: normalised, company suffixes removed. A name made only of
 * suffixes ("Ltd. Şti.") keeps its words rather than becoming empty, which would compare equal
 * to every other empty name.
 */
export function nameTokens(name: string): string[] {
  const tokens = normalizeText(name).split(" ").filter((t) => t !== "");
  const stripped = stripSuffixes(tokens);
  return stripped.length > 0 ? stripped : tokens;
}

/** nameTokens joined by single spaces: the form a name is shown and compared in. Idempotent. */
export function normalizeName(name: string): string {
  return nameTokens(name).join(" ");
}

/**
 * Jaro-Winkler similarity in [0,1] (prefix scale 0.1, prefix up to 4): the standard metric for
 * short personal names, forgiving one typo or a transposition ("yilmaz"/"yilmas" 0.93) while
 * keeping different names apart.
 */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return 1;
  const s = [...a];
  const t = [...b];
  if (s.length === 0 || t.length === 0) return 0;
  const window = Math.max(0, Math.floor(Math.max(s.length, t.length) / 2) - 1);
  const sMatched = new Array<boolean>(s.length).fill(false);
  const tMatched = new Array<boolean>(t.length).fill(false);
  let matches = 0;
  for (let i = 0; i < s.length; i++) {
    for (let j = Math.max(0, i - window); j <= Math.min(t.length - 1, i + window); j++) {
      if (!tMatched[j] && s[i] === t[j]) {
        sMatched[i] = tMatched[j] = true;
        matches++;
        break;
      }
    }
  }
  if (matches === 0) return 0;
  let transpositions = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    if (!sMatched[i]) continue;
    while (!tMatched[j]) j++;
    if (s[i] !== t[j]) transpositions++;
    j++;
  }
  const jaro = (matches / s.length + matches / t.length + (matches - transpositions / 2) / matches) / 3;
  let prefix = 0;
  while (prefix < 4 && prefix < s.length && prefix < t.length && s[prefix] === t[prefix]) prefix++;
  return Math.min(1, jaro + prefix * 0.1 * (1 - jaro));
}

/**
 * Two words count as the same word from this Jaro-Winkler score up. High on purpose: "mehmet"
 * and "mahmut" (0.80) or "ali" and "alp" (0.82) are different people; one typo in a name of
 * five letters or more stays above it.
 */
export const TOKEN_MATCH = 0.88;

/**
 * Merges two adjacent words of `tokens` when the other name has them as one word and has
 * neither piece ("AYŞENUR" vs "Ayşe Nur"): a bank field often drops the space.
 */
function mergeAgainst(tokens: readonly string[], other: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const a = tokens[i]!;
    const b = tokens[i + 1];
    if (b !== undefined && other.has(a + b) && !other.has(a) && !other.has(b)) {
      out.push(a + b);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * How alike two names are, in [0,1], symmetric and insensitive to word order, case,
 * Turkish diacritics, punctuation and company suffixes.
 *
 * Metric (token-set Jaro-Winkler): the words of both names (nameTokens, deduplicated) are
 * paired one to one, best pairs first, a pair counting only from TOKEN_MATCH; with W the sum of
 * the paired scores, the result is the mean of W / (words of the shorter name) and the
 * Dice-like 2W / (words of both). The first term rewards "all of the shorter name is there",
 * the second penalises extra words, so:
 * - identical or reordered ("YILMAZ AYŞE" / "Ayşe Yılmaz"): 1;
 * - a missing middle name ("Ayşe Nur Yılmaz" / "Ayşe Yılmaz"): 0.9;
 * - a given name alone ("Ayşe" / "Ayşe Yılmaz"): 0.83, below the matching threshold;
 * - the same given name, another surname ("Ayşe Demir" / "Ayşe Yılmaz"): 0.5;
 * - unrelated names: 0. An initial ("A. Yılmaz") is not evidence for a given name.
 * An empty name (nothing to compare) scores 0.
 */
export function nameSimilarity(a: string, b: string): number {
  const ta = [...new Set(nameTokens(a))];
  const tb = [...new Set(nameTokens(b))];
  if (ta.length === 0 || tb.length === 0) return 0;
  // A canonical order of the two sides makes the result symmetric by construction.
  const [x0, y0] = ta.join(" ") <= tb.join(" ") ? [ta, tb] : [tb, ta];
  const x = [...new Set(mergeAgainst(x0, new Set(y0)))];
  const y = [...new Set(mergeAgainst(y0, new Set(x)))];
  const pairs: Array<{ i: number; j: number; score: number }> = [];
  for (let i = 0; i < x.length; i++) {
    for (let j = 0; j < y.length; j++) {
      const score = jaroWinkler(x[i]!, y[j]!);
      if (score >= TOKEN_MATCH) pairs.push({ i, j, score });
    }
  }
  pairs.sort((p, q) => q.score - p.score || p.i - q.i || p.j - q.j);
  const usedX = new Set<number>();
  const usedY = new Set<number>();
  let weight = 0;
  for (const p of pairs) {
    if (usedX.has(p.i) || usedY.has(p.j)) continue;
    usedX.add(p.i);
    usedY.add(p.j);
    weight += p.score;
  }
  const coverage = weight / Math.min(x.length, y.length);
  const dice = (2 * weight) / (x.length + y.length);
  return Math.min(1, Math.max(0, (coverage + dice) / 2));
}

/**
 * A reference in the form it is searched in: folded the Turkish way (a customer typing "ı" for
 * "I" still matches), upper case, letters and digits only ("ref: ab-cd 23.45" → "REFABCD2345").
 */
export function compactReference(text: string): string {
  return foldTurkish(text)
    .toLocaleUpperCase("en-US")
    .replace(/[^A-Z0-9]/g, "");
}

/**
 * Whether a deposit's reference occurs anywhere in a transfer description, whatever the case
 * and whatever spaces, dashes, dots or slashes the customer or the bank put inside it. Both
 * sides are compared in compactReference form, so "Ödeme ref: k7m2-qx9p teşekkürler" carries
 * "K7M2QX9P". References are eight characters from a 31-letter alphabet, so an accidental hit
 * across word boundaries is negligible; an empty reference is never found.
 */
export function findReference(description: string, reference: string): boolean {
  const needle = compactReference(reference);
  return needle !== "" && compactReference(description).includes(needle);
}
