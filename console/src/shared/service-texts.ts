import type { DescEnum } from "@bufbuild/protobuf";
import type { Language } from "./i18n.js";
import { CODE_TEXTS, RPC_TEXTS, type Pair } from "./service-texts-catalogue.js";

/*
 * Every service code the console shows, in the page's language: statuses, roles, RPC names (as
 * the human action each records), error codes and outcomes. The console never shows a code raw:
 * a code the catalogue lacks is still worded in the page's language ("Bilinmeyen işlem (Xyz)"),
 * with the code beside it so an operator can ask about it. The RPCs and codes themselves are in
 * service-texts-catalogue.ts; test/service-texts.test.ts walks the generated service descriptors
 * (every enum value, every RPC) and the services' error codes, so nothing ships untranslated.
 */

const pick = (lang: Language, pair: Pair): string => (lang === "tr" ? pair[1] : pair[0]);

/** The kinds of status (and other enumerated values) the services hand out, by their public lower-case names. */
export const STATUS_TEXTS = {
  deposit: {
    pending: ["pending", "bekliyor"],
    completed: ["completed", "tamamlandı"],
    failed: ["failed", "başarısız"],
    expired: ["expired", "süresi doldu"],
    cancelled: ["cancelled", "iptal edildi"],
  },
  withdrawal: {
    pending: ["pending", "bekliyor"],
    processing: ["processing", "işleniyor"],
    completed: ["completed", "tamamlandı"],
    failed: ["failed", "başarısız"],
    cancelled: ["cancelled", "iptal edildi"],
  },
  transfer: {
    matched: ["matched", "eşleşti"],
    review: ["waiting for review", "inceleme bekliyor"],
    unmatched: ["unmatched", "eşleşmedi"],
    returning: ["being returned", "iade ediliyor"],
    returned: ["returned", "iade edildi"],
  },
  transferReturn: {
    pending: ["pending", "bekliyor"],
    processing: ["processing", "işleniyor"],
    completed: ["completed", "tamamlandı"],
    failed: ["failed", "başarısız"],
  },
  withheldCredit: {
    open: ["open", "açık"],
    credited: ["credited", "bakiyeye eklendi"],
    dismissed: ["dismissed", "kapatıldı"],
  },
  delivery: {
    pending: ["pending", "bekliyor"],
    delivered: ["delivered", "teslim edildi"],
    failed: ["failed", "başarısız"],
  },
  /** One attempt to deliver a callback. */
  attempt: {
    delivered: ["delivered", "teslim edildi"],
    retry: ["will be tried again", "yeniden denenecek"],
    failed: ["failed", "başarısız"],
    lost: ["answer not recorded, sent again", "yanıt kaydedilemedi, yeniden gönderildi"],
  },
  approval: {
    pending: ["pending", "bekliyor"],
    approved: ["approved", "onaylandı"],
    rejected: ["rejected", "reddedildi"],
    expired: ["expired", "süresi doldu"],
  },
  withdrawalApproval: {
    awaiting: ["awaiting approval", "onay bekliyor"],
    approved: ["approved", "onaylandı"],
    rejected: ["rejected", "reddedildi"],
    expired: ["expired", "süresi doldu"],
    cancelled: ["cancelled", "iptal edildi"],
    trusted_key: ["by a trusted API key", "güvenilir API anahtarıyla"],
  },
  merchant: {
    active: ["active", "etkin"],
    disabled: ["disabled", "devre dışı"],
  },
  transactionType: {
    deposit: ["deposit", "yatırım"],
    withdrawal: ["withdrawal", "çekim"],
  },
  underpaymentRule: {
    review: ["an operator reviews it", "bir operatör inceler"],
    complete: ["completed with what arrived", "gelen tutarla tamamlanır"],
  },
  overpaymentRule: {
    complete: ["completed with what arrived", "gelen tutarla tamamlanır"],
    review: ["an operator reviews it", "bir operatör inceler"],
  },
  latePaymentRule: {
    review: ["an operator reviews it", "bir operatör inceler"],
    complete: ["completed with what arrived", "gelen tutarla tamamlanır"],
    return: ["returned to the sender", "gönderene iade edilir"],
  },
  /** What was done to an incoming transfer (its actions: GetTransfer). */
  transferAction: {
    matched: ["matched to a deposit", "bir yatırımla eşleştirildi"],
    completed: ["its deposit completed", "yatırımı tamamlandı"],
    refused: ["refused", "reddedildi"],
    return_requested: ["return requested", "iade istendi"],
    returned: ["returned", "iade edildi"],
    return_failed: ["return failed", "iade başarısız"],
  },
} as const satisfies Record<string, Record<string, Pair>>;

export type StatusKind = keyof typeof STATUS_TEXTS;

/** The generated enums, by full name, and the kind of status each one's values are. */
export const ENUM_KINDS: Readonly<Record<string, StatusKind>> = {
  "payments.deposit.v1.DepositStatus": "deposit",
  "payments.deposit.v1.TransferStatus": "transfer",
  "payments.payout.v1.WithdrawalStatus": "withdrawal",
  "payments.payout.v1.TransferReturnStatus": "transferReturn",
  "payments.payout.v1.WithheldCreditStatus": "withheldCredit",
  "payments.payout.v1.WithdrawalApprovalState": "withdrawalApproval",
  "payments.callback.v1.DeliveryStatus": "delivery",
  "payments.callback.v1.TransactionType": "transactionType",
  "payments.operator.v1.ApprovalStatus": "approval",
  "payments.merchant.v1.MerchantStatus": "merchant",
  "payments.merchant.v1.UnderpaymentRule": "underpaymentRule",
  "payments.merchant.v1.OverpaymentRule": "overpaymentRule",
  "payments.merchant.v1.LatePaymentRule": "latePaymentRule",
};

const FALLBACK = {
  status: ["unknown status ({code})", "bilinmeyen durum ({code})"],
  rpc: ["Unknown action ({code})", "Bilinmeyen işlem ({code})"],
  code: ["Unknown code ({code})", "Bilinmeyen kod ({code})"],
  role: ["unknown role ({code})", "bilinmeyen rol ({code})"],
  field: ["field {code}", "{code} alanı"],
} as const satisfies Record<string, Pair>;

function fallback(lang: Language, which: keyof typeof FALLBACK, code: string): string {
  return pick(lang, FALLBACK[which]).replace("{code}", code || "—");
}

function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** A status's (or another enumerated value's) public name, e.g. statusText("tr", "deposit", "completed") → "tamamlandı". */
export function statusText(lang: Language, kind: StatusKind, code: string): string {
  const pair = own<Pair>(STATUS_TEXTS[kind], code.toLowerCase());
  return pair ? pick(lang, pair) : fallback(lang, "status", code);
}

/** Whether the catalogue words this status. */
export function hasStatusText(kind: StatusKind, code: string): boolean {
  return own<Pair>(STATUS_TEXTS[kind], code.toLowerCase()) !== undefined;
}

/** A generated enum's value (DepositStatus.COMPLETED, …) in words; UNSPECIFIED and unknown numbers get the fallback. */
export function enumText(lang: Language, desc: DescEnum, value: number): string {
  const kind = own(ENUM_KINDS, desc.typeName);
  const local = desc.values.find((v) => v.number === value)?.localName ?? String(value);
  return kind ? statusText(lang, kind, local) : fallback(lang, "status", local);
}

/** The method's name of an RPC as the audit and approvals write it (`payments.deposit.v1.DepositService/ResolveTransfer`, `console/CreateOperator`). */
export function rpcName(rpc: string): string {
  return rpc.slice(rpc.lastIndexOf("/") + 1);
}

/** The human action an RPC records: "ResolveTransfer" → "Transfer resolved" / "Havale sonuçlandırıldı". */
export function rpcText(lang: Language, rpc: string): string {
  const name = rpcName(rpc);
  const pair = own(RPC_TEXTS, name);
  return pair ? pick(lang, pair) : fallback(lang, "rpc", name);
}

export function hasRpcText(rpc: string): boolean {
  return own(RPC_TEXTS, rpcName(rpc)) !== undefined;
}

/** An error code (a refusal's reason, a withdrawal's failure reason) in words. */
export function codeText(lang: Language, code: string): string {
  const pair = own(CODE_TEXTS, code);
  return pair ? pick(lang, pair) : fallback(lang, "code", code);
}

export function hasCodeText(code: string): boolean {
  return own(CODE_TEXTS, code) !== undefined;
}

const OUTCOMES: Readonly<Record<string, Pair>> = {
  ok: ["done", "yapıldı"],
  running: ["running", "çalışıyor"],
};

/** An audit row's or an approval's outcome: `ok`, or the code it ended with. */
export function outcomeText(lang: Language, outcome: string): string {
  const pair = own(OUTCOMES, outcome);
  return pair ? pick(lang, pair) : codeText(lang, outcome);
}

const ROLES: Readonly<Record<string, Pair>> = {
  viewer: ["viewer", "izleyici"],
  operator: ["operator", "operatör"],
  finance: ["finance", "finans"],
  admin: ["admin", "yönetici"],
  owner: ["owner", "sahip"],
  developer: ["developer", "geliştirici"],
};

/** An operator's or a merchant user's role. */
export function roleText(lang: Language, role: string): string {
  const pair = own(ROLES, role);
  return pair ? pick(lang, pair) : fallback(lang, "role", role);
}

const FIELDS: Readonly<Record<string, Pair>> = {
  amount: ["amount", "tutar"],
  currency: ["currency", "para birimi"],
  iban: ["IBAN", "IBAN"],
  reason: ["reason", "neden"],
  note: ["note", "not"],
  name: ["name", "ad"],
  email: ["email", "e-posta"],
  role: ["role", "rol"],
  merchant_id: ["merchant", "üye işyeri"],
  deposit_id: ["deposit", "yatırım"],
  transfer_id: ["transfer", "havale"],
  withdrawal_id: ["withdrawal", "çekim"],
  match_deposit_id: ["deposit to match", "eşleştirilecek yatırım"],
  process_id: ["process id", "işlem numarası"],
  recipient_name: ["recipient's name", "alıcı adı"],
  account_name: ["account holder", "hesap sahibi"],
  bank_id: ["bank", "banka"],
  bank_reference: ["bank reference", "banka referansı"],
  failure_reason: ["failure reason", "başarısızlık nedeni"],
  callback_url: ["callback URL", "bildirim adresi"],
  allowed_ips: ["allowed IP addresses", "izinli IP adresleri"],
  threshold: ["threshold", "eşik"],
  from: ["from", "başlangıç"],
  to: ["to", "bitiş"],
  reference: ["reference", "referans"],
  display_name: ["display name", "görünen ad"],
};

/** A request field a service named (VALIDATION_ERROR), as the service spells it (`match_deposit_id`, `return.recipient_name`, `amount`). */
export function fieldText(lang: Language, field: string): string {
  const last = field.slice(field.lastIndexOf(".") + 1);
  const snake = last.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const pair = own(FIELDS, snake);
  return pair ? pick(lang, pair) : fallback(lang, "field", field);
}

const SERVICES: Readonly<Record<string, Pair>> = {
  merchant: ["Merchants", "Üye işyerleri"],
  "bank-catalog": ["Bank catalogue", "Banka kataloğu"],
  deposit: ["Deposits", "Yatırımlar"],
  payout: ["Payouts", "Ödemeler ve çekimler"],
  "callback-sender": ["Callbacks", "Bildirimler"],
  console: ["Console", "Konsol"],
};

/** A service (the audit's and the approvals' source) by what it keeps. */
export function serviceText(lang: Language, service: string): string {
  const pair = own(SERVICES, service);
  return pair ? pick(lang, pair) : fallback(lang, "code", service);
}

/** A callback event's type (`deposit.completed`) as the status change it tells: "yatırım: tamamlandı". */
export function eventTypeText(lang: Language, type: string): string {
  const [kind = "", status = ""] = type.split(".", 2);
  if (kind === "deposit" || kind === "withdrawal") return `${statusText(lang, "transactionType", kind)}: ${statusText(lang, kind, status)}`;
  return fallback(lang, "status", type);
}

/** The callback sender's own reasons an attempt was not sent (services/callback-sender sender.ts). */
const ATTEMPT_ERRORS: Readonly<Record<string, Pair>> = {
  "the merchant has no callback URL set": ["the merchant has no callback URL set", "üye işyerinin bildirim adresi yok"],
  "the merchant's callback URL is not a URL": ["the merchant's callback URL is not a URL", "üye işyerinin bildirim adresi geçerli bir adres değil"],
};

/** A callback attempt's error: the sender's own reasons in the page's language; a receiver's answer (`HTTP 500: …`) or a network error as it came. */
export function attemptErrorText(lang: Language, error: string): string {
  const pair = own(ATTEMPT_ERRORS, error);
  return pair ? pick(lang, pair) : error;
}

/** A console record's reason naming a role (`<who> as <role>`: an invite, a role change) in the page's language: `<who> (sahip)`. */
export function roleReasonText(lang: Language, reason: string): string {
  const m = /^(.+) as ([a-z]+)$/.exec(reason);
  return m && own(ROLES, m[2]!) && lang === "tr" ? `${m[1]} (${roleText(lang, m[2]!)})` : reason;
}

/** Who did something, as the services record a four-eyes call (`<maker>, approved by <approver>`): on Turkish pages `<maker> (onaylayan: <approver>)`. */
export function actorText(lang: Language, actor: string): string {
  const m = /^(.+), approved by (\S+)(.*)$/.exec(actor);
  return m && lang === "tr" ? `${m[1]} (onaylayan: ${m[2]}${m[3]})` : actor;
}
