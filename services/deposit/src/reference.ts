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
