import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { listOperators } from "../identity/operators.js";
import type { ConsoleContext } from "../context.js";
import { html, type SafeHtml } from "../shared/html.js";
import type { Language } from "../shared/i18n.js";
import type { SignedIn } from "./operator-call.js";

/**
 * Names first, ids second: who and what an id is, for the operators' pages. Merchants (id → name,
 * and whether the merchant is a sandbox one now), receiving accounts (IBAN or id → account name,
 * bank, sandbox), banks (id → name) and the console's own operators (email → name), read together
 * (three service calls at once, as the signed-in operator, and one query) and kept per console for
 * a minute: names change rarely, and a page shows them without one call per row. An id the copy
 * does not know (a merchant made since) reads it again once, if it was read before the page began.
 * A part a service would not give (down, or the role may not read it) is left out: its ids are
 * shown as they are, and it is asked again on the next page.
 */

export interface MerchantEntry {
  id: string;
  name: string;
  sandbox: boolean;
}

export interface AccountEntry {
  id: string;
  iban: string;
  accountName: string;
  bankId: string;
  bankName: string;
  sandbox: boolean;
}

interface Snapshot {
  /** When its reading began (the console's clock, ms). */
  startedAt: number;
  merchants: Map<string, MerchantEntry> | undefined;
  accounts: Map<string, AccountEntry> | undefined;
  accountsById: Map<string, AccountEntry> | undefined;
  banks: Map<string, string> | undefined;
  operators: Map<string, string> | undefined;
}

/** How long a reading is used: names change rarely. */
export const DIRECTORY_TTL_MS = 60_000;
const PAGE = 100;
/** A walk of ListMerchants stops here (10,000 merchants): the rest are shown by id. */
const MAX_PAGES = 100;

interface Cache {
  snapshot: Snapshot | undefined;
  loading: Promise<Snapshot> | undefined;
}
const caches = new WeakMap<ConsoleContext, Cache>();

const soft = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
  try {
    return await read();
  } catch {
    return undefined;
  }
};

async function readMerchants(who: SignedIn): Promise<Map<string, MerchantEntry>> {
  const out = new Map<string, MerchantEntry>();
  let pageToken = "";
  // Each page names the next: a walk, one call after another (the only serial calls here).
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await who.client(MerchantService).listMerchants({ pageSize: PAGE, pageToken });
    for (const m of page.merchants) out.set(m.id, { id: m.id, name: m.name, sandbox: m.sandbox });
    if (!page.nextPageToken) break;
    pageToken = page.nextPageToken;
  }
  return out;
}

async function readOperators(deps: ConsoleContext): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let after: { createdAt: number; id: string } | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await listOperators(deps.db, { limit: 500, ...(after ? { after } : {}) });
    for (const o of page) out.set(o.email.toLowerCase(), o.displayName);
    const last = page.at(-1);
    if (!last || page.length < 500) break;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return out;
}

async function read(deps: ConsoleContext, who: SignedIn): Promise<Snapshot> {
  const startedAt = deps.clock.now().getTime();
  const [merchants, accounts, banks, operators] = await Promise.all([
    soft(() => readMerchants(who)),
    soft(() => who.client(BankCatalogService).listReceivingAccounts({})),
    soft(() => who.client(BankCatalogService).listBanks({})),
    soft(() => readOperators(deps)),
  ]);
  const bankNames = banks ? new Map(banks.banks.map((b) => [b.id, b.name])) : undefined;
  const entries = accounts?.accounts.map((a) => ({ id: a.id, iban: a.iban, accountName: a.accountName, bankId: a.bankId, bankName: a.bankName || bankNames?.get(a.bankId) || "", sandbox: a.sandbox }));
  return {
    startedAt,
    merchants,
    accounts: entries ? new Map(entries.map((a) => [a.iban, a])) : undefined,
    accountsById: entries ? new Map(entries.map((a) => [a.id, a])) : undefined,
    banks: bankNames,
    operators,
  };
}

const complete = (s: Snapshot) => s.merchants !== undefined && s.accounts !== undefined && s.banks !== undefined && s.operators !== undefined;

/** The cached reading, or a new one (callers at the same time share it). */
async function snapshotOf(deps: ConsoleContext, who: SignedIn, notBefore?: number): Promise<Snapshot> {
  let cache = caches.get(deps);
  if (!cache) {
    cache = { snapshot: undefined, loading: undefined };
    caches.set(deps, cache);
  }
  const now = deps.clock.now().getTime();
  const s = cache.snapshot;
  const fresh = s && complete(s) && now - s.startedAt < DIRECTORY_TTL_MS && (notBefore === undefined || s.startedAt >= notBefore);
  if (s && fresh) return s;
  if (cache.loading) {
    const loading = await cache.loading;
    if (notBefore === undefined || loading.startedAt >= notBefore) return loading;
  }
  const c = cache;
  const loading = read(deps, who);
  c.loading = loading;
  try {
    const snapshot = await loading;
    c.snapshot = snapshot;
    return snapshot;
  } finally {
    if (c.loading === loading) c.loading = undefined;
  }
}

/** The names a page shows, read once for it. */
export class Names {
  private constructor(
    private readonly deps: ConsoleContext,
    private readonly who: SignedIn,
    private readonly askedAt: number,
    private snapshot: Snapshot,
  ) {}

  static async of(deps: ConsoleContext, who: SignedIn): Promise<Names> {
    const askedAt = deps.clock.now().getTime();
    return new Names(deps, who, askedAt, await snapshotOf(deps, who));
  }

  /** Reads the directory again when one of these ids is unknown to a reading made before the page began (a merchant made since). */
  async ensure(ids: { merchants?: Iterable<string>; ibans?: Iterable<string>; actors?: Iterable<string> }): Promise<this> {
    const s = this.snapshot;
    const unknown =
      [...(ids.merchants ?? [])].some((id) => id && s.merchants && !s.merchants.has(id)) ||
      [...(ids.ibans ?? [])].some((iban) => iban && s.accounts && !s.accounts.has(iban)) ||
      [...(ids.actors ?? [])].some((actor) => actor.includes("@") && s.operators && !s.operators.has(actor.toLowerCase()));
    if (unknown && s.startedAt < this.askedAt) this.snapshot = await snapshotOf(this.deps, this.who, this.askedAt);
    return this;
  }

  merchant(id: string): MerchantEntry | undefined {
    return this.snapshot.merchants?.get(id);
  }

  /** Every merchant known, by name (Turkish order). Undefined when the merchant service gave none. */
  merchants(): MerchantEntry[] | undefined {
    const all = this.snapshot.merchants;
    return all ? [...all.values()].sort((a, b) => a.name.localeCompare(b.name, "tr") || a.id.localeCompare(b.id)) : undefined;
  }

  account(iban: string): AccountEntry | undefined {
    return this.snapshot.accounts?.get(iban);
  }

  accountById(id: string): AccountEntry | undefined {
    return this.snapshot.accountsById?.get(id);
  }

  bank(id: string): string | undefined {
    return this.snapshot.banks?.get(id);
  }

  operator(email: string): string | undefined {
    return this.snapshot.operators?.get(email.toLowerCase());
  }
}

const TEXTS = {
  en: { anyMerchant: "Every merchant", liveMerchants: "Live merchants", sandboxMerchants: "Sandbox merchants" },
  tr: { anyMerchant: "Tüm üye işyerleri", liveMerchants: "Canlı üye işyerleri", sandboxMerchants: "Test ortamındaki üye işyerleri" },
} as const;

/** A name with its id beside it, smaller, to copy; the id alone when no name is known. */
export function named(name: string | undefined, id: string, href?: string): SafeHtml {
  if (!id) return html`${name || "—"}`;
  const label = name || null;
  if (!label) return href ? html`<a href="${href}"><code class="id">${id}</code></a>` : html`<code class="id">${id}</code>`;
  return html`${href ? html`<a href="${href}">${label}</a>` : label} <small><code class="id">${id}</code></small>`;
}

/** A merchant by name (linked to its page), its id beside it. */
export function merchantNamed(names: Names, id: string, link = true): SafeHtml {
  return named(names.merchant(id)?.name, id, link ? `/merchants/${id}` : undefined);
}

/** A receiving account by its name and bank, the IBAN beside it. */
export function accountNamed(names: Names, iban: string): SafeHtml {
  if (!iban) return html`—`;
  const a = names.account(iban);
  return a ? html`${a.accountName} · ${a.bankName || names.bank(a.bankId) || a.bankId} <small><code class="id">${iban}</code></small>` : html`<code class="id">${iban}</code>`;
}

/** A bank by name, its id beside it. */
export function bankNamed(names: Names, bankId: string): SafeHtml {
  return named(names.bank(bankId), bankId);
}

/** An operator (or a service, an API key: whoever acted) by name, the email beside it. */
export function actorNamed(names: Names, actor: string): SafeHtml {
  return actor ? named(names.operator(actor), actor) : html`—`;
}

/** Whether an incoming transfer is sandbox money: its receiving account's kind, or the sandbox helper reported it. Undefined: not known. */
export function transferSandbox(names: Names, transfer: { iban: string; source: string }): boolean | undefined {
  if (transfer.source === "sandbox") return true;
  return names.account(transfer.iban)?.sandbox;
}

export interface MerchantSelectOptions {
  id: string;
  name: string;
  label: string;
  value: string;
  lang: Language;
  /** The mode shown: its merchants first. */
  sandboxFirst: boolean;
  required?: boolean;
  error?: string | undefined;
}

/**
 * The merchant filter: a `<select>` of merchants by name (the page's mode's merchants first),
 * "every merchant" first unless one is required; a value not in the list (an id typed in a link)
 * stays chosen. When the merchant service gave no list, a search field for the id instead.
 */
export function merchantSelect(names: Names, o: MerchantSelectOptions): SafeHtml {
  const t = TEXTS[o.lang];
  const errorId = o.error ? `${o.id}-error` : undefined;
  const all = names.merchants();
  const invalid = o.error ? html` aria-invalid="true" aria-describedby="${errorId}"` : null;
  const error = o.error ? html`<p class="error" id="${errorId}">${o.error}</p>` : null;
  if (!all) {
    return html`<label for="${o.id}">${o.label}</label>
<input id="${o.id}" name="${o.name}" type="search" value="${o.value}"${o.required ? html` required` : null}${invalid}>${error}`;
  }
  const option = (m: MerchantEntry) => html`<option value="${m.id}"${m.id === o.value ? html` selected` : null}>${m.name} (${m.id})</option>`;
  const group = (sandbox: boolean) => {
    const members = all.filter((m) => m.sandbox === sandbox);
    return members.length > 0 ? html`<optgroup label="${sandbox ? t.sandboxMerchants : t.liveMerchants}">${members.map(option)}</optgroup>` : null;
  };
  const stray = o.value && !all.some((m) => m.id === o.value) ? html`<option value="${o.value}" selected>${o.value}</option>` : null;
  return html`<label for="${o.id}">${o.label}</label>
<select id="${o.id}" name="${o.name}"${o.required ? html` required` : null}${invalid}><option value="">${o.required ? "—" : t.anyMerchant}</option>${stray}${group(o.sandboxFirst)}${group(!o.sandboxFirst)}</select>${error}`;
}
