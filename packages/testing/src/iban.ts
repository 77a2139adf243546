import { randomBytes } from "node:crypto";
import { composeIBAN } from "ibantools";

// Turkish IBANs for tests, valid by ISO 13616 (mod-97 check digits computed by ibantools, as
// the kit's iban.ts checks them): TR, two check digits, the 5-digit bank (EFT) code, a
// reserved digit and the 16-character account.

/** The Turkish IBAN of a 22-character BBAN (bank code, reserved digit, account). */
export function turkishIban(bban: string): string {
  const iban = composeIBAN({ countryCode: "TR", bban });
  if (!iban) throw new Error(`no Turkish IBAN has the BBAN ${bban}`);
  return iban;
}

/**
 * The IBAN of account `account` at the bank with EFT code `bankCode` (padded to 5 digits): the
 * reserved digit 0, the account padded to 16 digits with `fill` ("0" unless told).
 */
export function bankIban(bankCode: string, account: number | bigint | string, fill = "0"): string {
  return turkishIban(`${bankCode.padStart(5, "0")}0${String(account).padStart(16, fill)}`);
}

/** An IBAN of the made-up bank 00099 with a random account: no receiving account has it. */
export function unusedIban(): string {
  return bankIban("00099", String(randomBytes(6).readUIntBE(0, 6)).slice(-16));
}
