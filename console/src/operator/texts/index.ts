import type { Language } from "../../shared/i18n.js";
import { defineTexts } from "../../shared/texts.js";
import { commonTexts } from "./common.js";
import { transfersTexts } from "./transfers.js";
import { merchantsTexts } from "./merchants.js";
import { paymentsTexts } from "./payments.js";
import { booksTexts } from "./books.js";
import { approvalsTexts } from "./approvals.js";

/**
 * The operators' console's words, one dictionary made of its areas' (`operator/texts/<area>.ts`),
 * read through the same `defineTexts` as every other text of the console: English is the source
 * of the keys and Turkish must name each (the types say so).
 */
const en = { ...commonTexts.en, ...transfersTexts.en, ...merchantsTexts.en, ...paymentsTexts.en, ...booksTexts.en, ...approvalsTexts.en };
const tr: Record<keyof typeof en, string> = { ...commonTexts.tr, ...transfersTexts.tr, ...merchantsTexts.tr, ...paymentsTexts.tr, ...booksTexts.tr, ...approvalsTexts.tr };

export type TextKey = keyof typeof en;

const texts = defineTexts(en, tr);

/** The text of `key` in `lang`, with `{name}` placeholders filled in (plain text: the caller's template escapes it). */
export function text(lang: Language, key: TextKey, params: Record<string, string | number> = {}): string {
  return texts(lang, key, params);
}
