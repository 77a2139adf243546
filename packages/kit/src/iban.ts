import { isValidIBAN } from "ibantools";

/**
 * What an IBAN is, for every service: the electronic form they store and compare, and what
 * makes one a Turkish IBAN (the only kind money is paid to or received on). Each service words
 * its own messages from `turkishIbanProblem`'s answer; the rule itself lives only here.
 */

/** A Turkish IBAN has 26 characters: TR, two check digits, the 5-digit bank code, a reserved digit and the 16-character account. */
export const TURKISH_IBAN_LENGTH = 26;

/** An IBAN in electronic format: whitespace removed, letters upper-cased. */
export function normalizeIban(input: string): string {
  return input.replace(/\s+/g, "").toUpperCase();
}

/** Whether an IBAN in electronic form is valid for its country (ISO 13616: length, BBAN format, mod-97 check digits). Any country. */
export function isValidIban(electronic: string): boolean {
  return isValidIBAN(electronic);
}

/**
 * Why an IBAN in electronic form (see normalizeIban) is not a Turkish one, the first of:
 * - "empty": nothing at all;
 * - "characters": anything but A-Z and 0-9 (a dash, a non-ASCII letter or digit);
 * - "country": it does not start with TR;
 * - "length": not TURKISH_IBAN_LENGTH characters;
 * - "checksum": the Turkish BBAN format (5-digit bank code, then 17 letters or digits) or the ISO 13616 mod-97 check digits do not hold.
 * Undefined when it is a valid Turkish IBAN.
 */
export type TurkishIbanProblem = "empty" | "characters" | "country" | "length" | "checksum";

export function turkishIbanProblem(electronic: string): TurkishIbanProblem | undefined {
  if (electronic === "") return "empty";
  if (!/^[A-Z0-9]+$/.test(electronic)) return "characters";
  if (!electronic.startsWith("TR")) return "country";
  if (electronic.length !== TURKISH_IBAN_LENGTH) return "length";
  if (!isValidIBAN(electronic)) return "checksum";
  return undefined;
}

/** Whether an IBAN in electronic form is a valid Turkish IBAN. Not normalised here: "tr33 0006 …" is not one until normalizeIban made it so. */
export function isTurkishIban(electronic: string): boolean {
  return turkishIbanProblem(electronic) === undefined;
}

/** The 5-digit bank (EFT) code inside a Turkish IBAN: characters 5 to 9. */
export function turkishIbanBankCode(iban: string): string {
  return iban.slice(4, 9);
}
