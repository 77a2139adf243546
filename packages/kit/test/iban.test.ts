import test from "ava";
import { composeIBAN } from "ibantools";
import { isTurkishIban, isValidIban, normalizeIban, TURKISH_IBAN_LENGTH, turkishIbanBankCode, turkishIbanProblem } from "../src/index.js";

const VALID = "TR330006100519786457841326";
/** VALID with its last digit changed: the mod-97 check digits no longer hold. */
const WRONG_CHECKSUM = "TR330006100519786457841327";

test("normalizeIban removes every kind of whitespace and upper-cases letters", (t) => {
  t.is(normalizeIban("tr33 0006 1005 1978 6457 8413 26"), VALID);
  t.is(normalizeIban(" TR33\t0006\n1005 1978 6457 8413 26 "), VALID);
  // A no-break space (a copy from a PDF or a web page) is whitespace too.
  t.is(normalizeIban("TR33\u00a00006\u00a01005\u00a01978\u00a06457\u00a08413\u00a026"), VALID);
  t.is(normalizeIban(""), "");
  t.is(normalizeIban("tr-33"), "TR-33", "anything else is left for the check to refuse");
});

test("a valid Turkish IBAN has no problem", (t) => {
  t.is(TURKISH_IBAN_LENGTH, 26);
  t.is(turkishIbanProblem(VALID), undefined);
  t.true(isTurkishIban(VALID));
  t.true(isValidIban(VALID));
});

test("every sandbox-style IBAN composed for a bank code is Turkish and carries that code", (t) => {
  for (const code of ["00010", "00012", "00046", "00062", "00099"]) {
    const iban = composeIBAN({ countryCode: "TR", bban: `${code}0${"1234567890123456"}` })!;
    t.true(isTurkishIban(iban), iban);
    t.is(turkishIbanBankCode(iban), code);
  }
});

test("letters in the 16-character account part are what ISO 13616 allows for TR", (t) => {
  const iban = composeIBAN({ countryCode: "TR", bban: "000610ABCDEF0123456789" })!;
  t.is(iban.length, 26);
  t.is(turkishIbanProblem(iban), undefined);
  // The bank code is digits only.
  const letterInBankCode = composeIBAN({ countryCode: "TR", bban: "0006A0ABCDEF0123456789" });
  if (letterInBankCode) t.is(turkishIbanProblem(letterInBankCode), "checksum");
  t.false(isTurkishIban("TR330006A00519786457841326"));
});

test("wrong check digits", (t) => {
  t.is(turkishIbanProblem(WRONG_CHECKSUM), "checksum");
  t.false(isTurkishIban(WRONG_CHECKSUM));
  t.false(isValidIban(WRONG_CHECKSUM));
  // Check digits swapped.
  t.is(turkishIbanProblem("TR330006100519786457841362"), "checksum");
});

test("another country's IBAN is valid but not Turkish", (t) => {
  t.true(isValidIban("DE89370400440532013000"));
  t.is(turkishIbanProblem("DE89370400440532013000"), "country");
  t.false(isTurkishIban("DE89370400440532013000"));
  // 26 characters, valid check digits? No matter: not TR.
  t.is(turkishIbanProblem("XX330006100519786457841326"), "country");
});

test("a Turkish IBAN one character short or long", (t) => {
  t.is(turkishIbanProblem(VALID.slice(0, 25)), "length");
  t.is(turkishIbanProblem(`${VALID}0`), "length");
  t.is(turkishIbanProblem("TR"), "length");
  t.false(isTurkishIban(VALID.slice(0, 25)));
});

test("empty, and characters that are not A-Z or 0-9", (t) => {
  t.is(turkishIbanProblem(""), "empty");
  t.false(isTurkishIban(""));
  t.false(isValidIban(""));
  t.is(turkishIbanProblem("TR33-0006-1005-1978-6457-84"), "characters");
  t.is(turkishIbanProblem("TR33 0006 1005 1978 6457 8413 26"), "characters", "spaces are normalizeIban's to remove, not the check's");
});

test("the check is on the electronic form: lower case is refused until normalised", (t) => {
  const lower = VALID.toLowerCase();
  t.is(turkishIbanProblem(lower), "characters");
  t.false(isTurkishIban(lower));
  t.true(isTurkishIban(normalizeIban(lower)));
  t.true(isTurkishIban(normalizeIban("tr33 0006 1005 1978 6457 8413 26")));
});

test("non-ASCII letters and digits are refused, also where they look like ASCII", (t) => {
  // Full-width TR and Arabic-Indic / full-width digits: 26 characters that read as an IBAN.
  t.is(turkishIbanProblem(`\uff34\uff32${VALID.slice(2)}`), "characters");
  t.is(turkishIbanProblem(`TR${"\u0663\u0663"}${VALID.slice(4)}`), "characters");
  t.is(turkishIbanProblem(`TR33${"\uff10"}${VALID.slice(5)}`), "characters");
  // Dotted capital İ is outside A-Z; dotless ı upper-cases to an ASCII I, which then is no digit where TR's bank code wants one.
  t.is(normalizeIban("\u0131"), "I");
  t.is(turkishIbanProblem(normalizeIban(`tr33${"\u0131"}${VALID.slice(5)}`)), "checksum");
  t.is(turkishIbanProblem(`TR33${"\u0130"}${VALID.slice(5)}`), "characters");
  t.false(isValidIban(`TR33${"\u0130"}${VALID.slice(5)}`));
  // Combining characters and zero-width spaces are not whitespace to normalizeIban.
  t.is(turkishIbanProblem(normalizeIban(`TR33\u200b${VALID.slice(4)}`)), "characters");
});

test("turkishIbanBankCode: the five digits after TR and the check digits", (t) => {
  t.is(turkishIbanBankCode(VALID), "00061");
  t.is(turkishIbanBankCode("TR640004600000187230459611"), "00046");
});
