import type { Language } from "./i18n.js";
import { formatMoney } from "./format.js";
import { rpcName, rpcText } from "./service-texts.js";

/*
 * What an approval asks for, in the page's language, from its RPC and its exact request (the
 * approval's `requestJson`, protobuf JSON: camelCase, int64 as text, zero values left out),
 * rather than the service's English `summary`. An RPC without its own sentence here is named by
 * its action (rpcText); the summary is a fallback only on English pages.
 */

export interface ApprovalLike {
  rpc: string;
  requestJson: string;
  summary: string;
}

/** A merchant's name when the page knows it (names before ids), else undefined. */
export type MerchantNames = (merchantId: string) => string | undefined;

type Request = Record<string, unknown>;
type Describe = (r: Request, lang: Language, names: MerchantNames) => string | undefined;

const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "");

function money(r: Request, lang: Language, key = "amount"): string | undefined {
  const raw = str(r[key]);
  if (!/^-?\d+$/.test(raw)) return undefined;
  return formatMoney(BigInt(raw), str(r.currency) || "TRY", lang);
}

function merchant(r: Request, names: MerchantNames): string {
  const id = str(r.merchantId);
  const name = id ? names(id) : undefined;
  return name ? `${name} (${id})` : id;
}

const tr = (lang: Language, en: string, turkish: string) => (lang === "tr" ? turkish : en);

const DESCRIBE: Readonly<Record<string, Describe>> = {
  CreateWithdrawal: (r, lang) => {
    const amount = money(r, lang);
    if (!amount) return undefined;
    const holder = str(r.accountName);
    return tr(lang, `Withdraw ${amount} to ${str(r.iban)}${holder ? ` (${holder})` : ""}`, `${amount} çekim: ${str(r.iban)} hesabına${holder ? `, ${holder}` : ""}`);
  },
  AdjustBalance: (r, lang, names) => {
    const amount = money(r, lang);
    if (!amount) return undefined;
    return tr(lang, `Adjust the balance of ${merchant(r, names)} by ${amount}`, `${merchant(r, names)} bakiyesine ${amount} düzeltme`);
  },
  CreateTransferReturn: (r, lang) => {
    const amount = money(r, lang);
    if (!amount) return undefined;
    const name = str(r.recipientName);
    return tr(lang, `Return ${amount} of transfer ${str(r.transferId)} to ${str(r.iban)}${name ? ` (${name})` : ""}`, `${str(r.transferId)} havalesinin ${amount} tutarı iade: ${str(r.iban)} hesabına${name ? `, ${name}` : ""}`);
  },
  ResolveWithheldCredit: (r, lang) =>
    r.credit === true
      ? tr(lang, `Credit withheld sandbox money ${str(r.id)} to the merchant's live balance`, `Bekletilen test parası ${str(r.id)} üye işyerinin canlı bakiyesine eklensin`)
      : tr(lang, `Dismiss withheld sandbox money ${str(r.id)}`, `Bekletilen test parası ${str(r.id)} kapatılsın`),
  ConfirmDeposit: (r, lang) => {
    const amount = money(r, lang);
    const id = str(r.depositId);
    return amount ? tr(lang, `Confirm deposit ${id} with ${amount}`, `${id} yatırımı ${amount} ile onaylansın`) : tr(lang, `Confirm deposit ${id}`, `${id} yatırımı onaylansın`);
  },
  ResolveTransfer: (r, lang) => {
    const id = str(r.transferId);
    if (r.matchDepositId) return tr(lang, `Match transfer ${id} to deposit ${str(r.matchDepositId)}`, `${id} havalesi ${str(r.matchDepositId)} yatırımıyla eşleştirilsin`);
    if (r.complete === true) return tr(lang, `Complete the deposit of transfer ${id}`, `${id} havalesinin yatırımı tamamlansın`);
    if (r.refuse === true) return tr(lang, `Refuse transfer ${id}`, `${id} havalesi reddedilsin`);
    if (r.return && typeof r.return === "object") {
      const ret = r.return as Request;
      const to = str(ret.iban);
      return to ? tr(lang, `Return transfer ${id} to ${to}`, `${id} havalesi ${to} hesabına iade edilsin`) : tr(lang, `Return transfer ${id} to its sender`, `${id} havalesi gönderene iade edilsin`);
    }
    return undefined;
  },
  CreateMerchant: (r, lang) => tr(lang, `Create live merchant ${str(r.name)}`, `Canlı üye işyeri oluşturulsun: ${str(r.name)}`),
  SetSandbox: (r, lang, names) => (r.sandbox === true ? tr(lang, `Switch ${merchant(r, names)} to sandbox`, `${merchant(r, names)} test moduna geçsin`) : tr(lang, `Switch ${merchant(r, names)} from sandbox to live`, `${merchant(r, names)} testten canlıya geçsin`)),
  CreateReceivingAccount: (r, lang) => tr(lang, `Add live receiving account ${str(r.iban)} (${str(r.accountName)})`, `Canlı tahsilat hesabı eklensin: ${str(r.iban)}, ${str(r.accountName)}`),
  UpdateReceivingAccount: (r, lang) =>
    r.active === true ? tr(lang, `Re-activate receiving account ${str(r.accountId)}`, `${str(r.accountId)} tahsilat hesabı yeniden etkinleştirilsin`) : tr(lang, `Update receiving account ${str(r.accountId)}`, `${str(r.accountId)} tahsilat hesabı güncellensin`),
};

function parse(json: string): Request | undefined {
  try {
    const value = JSON.parse(json) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Request) : undefined;
  } catch {
    return undefined;
  }
}

/** The approval's description: built from its RPC and request; in English the service's summary when the console has no sentence for it. */
export function approvalText(lang: Language, a: ApprovalLike, names: MerchantNames = () => undefined): string {
  const request = parse(a.requestJson);
  const describe = Object.hasOwn(DESCRIBE, rpcName(a.rpc)) ? DESCRIBE[rpcName(a.rpc)] : undefined;
  const built = request && describe ? describe(request, lang, names) : undefined;
  if (built) return built;
  if (lang === "en" && a.summary) return a.summary;
  return rpcText(lang, a.rpc);
}
