import type { Language } from "./i18n.js";

/** A text function over one area's own dictionary: `{name}` placeholders filled from params. */
export type Texts<K extends string> = (lang: Language, key: K, params?: Record<string, string | number>) => string;

const defined: Array<Readonly<Record<Language, Readonly<Record<string, string>>>>> = [];

/** Every dictionary defined so far, both languages (the browser walk learns the product's English words from them). */
export function definedTexts(): ReadonlyArray<Readonly<Record<Language, Readonly<Record<string, string>>>>> {
  return defined;
}

/**
 * The merchant dashboard's texts live with each area (`merchant/<area>/texts.ts`), so areas do not
 * share one long file. English is the source of the keys; Turkish must name each (the type says so).
 */
export function defineTexts<E extends Record<string, string>>(en: E, tr: { [K in keyof E]: string }): Texts<Extract<keyof E, string>> {
  const all: Record<Language, Record<string, string>> = { en, tr };
  defined.push(all);
  return (lang, key, params = {}) => all[lang][key]!.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
