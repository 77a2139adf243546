import { randomInt } from "node:crypto";

/**
 * The short reference a customer writes in the transfer description. Eight characters
 * from an alphabet without look-alikes (no 0/O, 1/I/L): about 40 bits, unique by an index,
 * easy to read aloud and to type on a banking app.
 */
export const REFERENCE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
export const REFERENCE_LENGTH = 8;

export function newReference(): string {
  let out = "";
  for (let i = 0; i < REFERENCE_LENGTH; i++) out += REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  return out;
}

/** Upper-cased letters and digits only: banks and customers add spaces, dashes and prefixes. */
export function normalizeDescription(text: string): string {
  return text
    .toLocaleUpperCase("en-US")
    .normalize("NFKD")
    .replace(/[^A-Z0-9]/g, "");
}

/** Whether a transfer description carries this reference anywhere in it. */
export function descriptionHasReference(description: string, reference: string): boolean {
  return reference !== "" && normalizeDescription(description).includes(normalizeDescription(reference));
}
