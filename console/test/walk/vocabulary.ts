import type { DescEnum } from "@bufbuild/protobuf";
import { paymentFiles } from "@payments/contracts";
import { CODE_TEXTS, RPC_TEXTS } from "../../src/shared/service-texts-catalogue.js";
import { STATUS_TEXTS } from "../../src/shared/service-texts.js";
import { definedTexts } from "../../src/shared/texts.js";

/*
 * The product's own words, both languages, as the walk's language check reads them: the English
 * and Turkish values of every dictionary the console defined (`defineTexts`, so the operators'
 * area dictionaries and every merchant area's), the service-text catalogue's pairs (RPCs as
 * actions, error codes, statuses), and the raw service codes (enum value names, RPC names, error
 * codes) that a page must never show. Read once the console's modules are loaded (the walk's
 * stack imports every page, so every dictionary is defined by then).
 */

export interface Vocabulary {
  /** Distinctive English words (lower case, ≥ 4 letters) that no Turkish text uses. */
  englishOnly: ReadonlySet<string>;
  /** Codes a page must never show raw (`ResolveTransfer`, `TRANSFER_NOT_OPEN`, `return_requested`), that no Turkish text writes either. */
  codes: ReadonlySet<string>;
}

/** Words as the check compares them: letters only, lower-cased the Turkish way on both sides (`IBAN` → `ıban`), placeholders out. */
export function wordsOf(text: string): string[] {
  return text.replace(/\{\w+\}/g, " ").toLocaleLowerCase("tr-TR").match(/\p{L}+/gu) ?? [];
}

/** Code-like tokens of a text, as written (`ResolveTransfer`, `TRANSFER_NOT_OPEN`). */
export function codeTokensOf(text: string): string[] {
  return text.match(/[A-Za-z][A-Za-z0-9_]*/g) ?? [];
}

let cached: Vocabulary | undefined;

export function vocabulary(): Vocabulary {
  if (cached) return cached;
  const en: string[] = [];
  const tr: string[] = [];
  for (const dictionary of definedTexts()) {
    en.push(...Object.values(dictionary.en));
    tr.push(...Object.values(dictionary.tr));
  }
  for (const table of [RPC_TEXTS, CODE_TEXTS, ...Object.values(STATUS_TEXTS)] as ReadonlyArray<Readonly<Record<string, readonly [string, string]>>>) {
    for (const [english, turkish] of Object.values(table)) {
      en.push(english);
      tr.push(turkish);
    }
  }
  if (en.length < 1000) throw new Error(`only ${en.length} English texts found: were the console's pages loaded before the walk?`);
  const turkishWords = new Set(tr.flatMap(wordsOf));
  const englishOnly = new Set(en.flatMap(wordsOf).filter((w) => w.length >= 4 && !turkishWords.has(w)));

  const enums: DescEnum[] = paymentFiles.flatMap((f) => [...f.enums, ...f.messages.flatMap((m) => m.nestedEnums)]);
  const rawCodes = [
    ...enums.flatMap((e) => e.values.flatMap((v) => [v.name, v.localName])),
    ...Object.keys(RPC_TEXTS),
    ...paymentFiles.flatMap((f) => f.services.flatMap((s) => s.methods.map((m) => m.name))),
    ...Object.keys(CODE_TEXTS),
    ...Object.values(STATUS_TEXTS).flatMap((t) => Object.keys(t).filter((k) => k.includes("_"))),
  ];
  const turkishTokens = new Set(tr.flatMap(codeTokensOf));
  const codes = new Set(rawCodes.filter((c) => /^[A-Za-z][A-Za-z0-9_]+$/.test(c) && c.length >= 4 && !turkishTokens.has(c)));
  cached = { englishOnly, codes };
  return cached;
}
