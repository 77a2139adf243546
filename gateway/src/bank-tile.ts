/** Words that every other bank name has too; they make poor initials. */
const GENERIC_WORDS = new Set(["türkiye", "türk", "cumhuriyeti", "bank", "banka", "bankası", "katılım", "ve", "a.ş.", "t.a.ş."]);

/**
 * Initials for a tile, from the distinctive words of the name: an acronym as is ("QNB"),
 * else the first letters of two words ("Yapı ve Kredi Bankası" → "YK"), else the first two
 * letters of one ("Türkiye İş Bankası" → "İŞ").
 */
export function bankInitials(name: string): string {
  const words = name.split(/\s+/).filter((w) => /^\p{L}/u.test(w));
  const distinctive = words.filter((w) => !GENERIC_WORDS.has(w.toLocaleLowerCase("tr-TR")));
  const chosen = distinctive.length > 0 ? distinctive : words;
  const [first, second] = chosen;
  if (!first) return "?";
  if (/^\p{Lu}{2,4}$/u.test(first)) return first;
  const initials = second ? [...first][0]! + [...second][0]! : [...first].slice(0, 2).join("");
  return initials.toLocaleUpperCase("tr-TR");
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c);
}

function hue(seed: string): number {
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.codePointAt(0)!) % 360;
  return h;
}

/** A self-contained SVG logo placeholder: the bank's initials on a colour derived from its code. */
export function bankTileSvg(bank: { name: string; code: string }): string {
  const initials = escapeXml(bankInitials(bank.name));
  const title = escapeXml(bank.name);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96" role="img" aria-label="${title}">`,
    `<title>${title}</title>`,
    `<rect width="96" height="96" rx="16" fill="hsl(${hue(bank.code)}, 55%, 38%)"/>`,
    `<text x="48" y="48" dy="0.35em" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="36" font-weight="700" fill="#ffffff">${initials}</text>`,
    `</svg>`,
  ].join("");
}
