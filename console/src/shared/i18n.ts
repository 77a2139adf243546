/** The languages of the console: Turkish (the default) and English. */
export const LANGUAGES = ["tr", "en"] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = "tr";

export function isLanguage(value: unknown): value is Language {
  return typeof value === "string" && (LANGUAGES as readonly string[]).includes(value);
}

/**
 * The language to answer in: an explicit choice (`?lang=` or the cookie it set), else the first
 * of Accept-Language's languages, by weight, that the console speaks, else Turkish.
 */
export function chooseLanguage(choice: string | undefined, acceptLanguage: string | undefined): Language {
  if (isLanguage(choice)) return choice;
  const ranked = (acceptLanguage ?? "")
    .split(",")
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { lang: tag.trim().toLowerCase().split("-")[0] ?? "", q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked.map((entry) => entry.lang).find(isLanguage) ?? DEFAULT_LANGUAGE;
}
