import type { CheckoutStatus } from "./view.js";

/** The languages of the checkout page; Turkish is the default. */
export const LANGUAGES = ["tr", "en"] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = "tr";

export interface StatusText {
  title: string;
  text: string;
}

/**
 * A status whose text depends on whether the page has a link back to the merchant: the
 * completion text must not promise a way back the page cannot give.
 */
export interface StatusTexts extends StatusText {
  /** Used instead of `text` when the page shows the return link. */
  textWithReturn?: string;
}

/** Every word the page shows, per language. Templates name their blanks in braces and are filled by fillText. */
export interface CheckoutTexts {
  /** BCP 47 tag for Intl and the html lang attribute. */
  locale: string;
  pageTitle: string;
  heading: string;
  languageSwitch: string;
  merchantLabel: string;
  orderLabel: string;
  amountLabel: string;
  status: Record<CheckoutStatus, StatusTexts>;
  deadlineLabel: string;
  /** {day} {month} {year} {time}, the deadline in Türkiye's time. */
  deadlineFormat: string;
  timeLeft: string;
  timeUp: string;
  instructions: string;
  bankName: string;
  accountName: string;
  iban: string;
  reference: string;
  referenceNote: string;
  copy: string;
  copied: string;
  copyFailed: string;
  /** What the live region says of each copied field, in {name}. */
  copyNames: { iban: string; reference: string };
  copiedAnnouncement: string;
  copyFailedAnnouncement: string;
  /** {merchant}: the merchant's display name. */
  returnToMerchant: string;
  /** The return link when the merchant has no display name. */
  returnToShop: string;
  noAccountTitle: string;
  noAccountText: string;
  sandboxBadge: string;
  sandboxText: string;
  simulate: string;
  simulating: string;
  simulateFailed: string;
  connectionLost: string;
  invalidTitle: string;
  invalidText: string;
  unavailableTitle: string;
  unavailableText: string;
}

/** Each language's name in itself, for the language switch (read out with the link's own lang). */
export const LANGUAGE_NAMES: Readonly<Record<Language, string>> = { tr: "Türkçe", en: "English" };

export const TEXTS: Readonly<Record<Language, CheckoutTexts>> = {
  tr: {
    locale: "tr-TR",
    pageTitle: "Ödeme",
    heading: "Havale / EFT ile ödeme",
    languageSwitch: "Dil",
    merchantLabel: "Satıcı",
    orderLabel: "Sipariş numarası",
    amountLabel: "Tutar",
    status: {
      pending: {
        title: "Ödemeniz bekleniyor",
        text: "Aşağıdaki hesaba tam tutarı havale veya EFT ile gönderin. Ödemeniz ulaştığında bu sayfa kendiliğinden güncellenir.",
      },
      completed: {
        title: "Ödeme alındı",
        text: "Teşekkürler, ödemeniz onaylandı. Bu sayfayı kapatabilirsiniz.",
        textWithReturn: "Teşekkürler, ödemeniz onaylandı. Aşağıdaki bağlantıyla satıcının sitesine dönebilirsiniz.",
      },
      expired: {
        title: "Ödeme süresi doldu",
        text: "Bu hesaba artık para göndermeyin. Yeni bir ödemeyi satıcının sitesinden başlatabilirsiniz.",
        textWithReturn: "Bu hesaba artık para göndermeyin. Yeni bir ödeme için aşağıdaki bağlantıyla satıcının sitesine dönün.",
      },
      failed: {
        title: "Ödeme başarısız",
        text: "Ödeme tamamlanamadı. Lütfen satıcıyla iletişime geçin.",
      },
      cancelled: {
        title: "Ödeme iptal edildi",
        text: "Bu ödeme iptal edildi. Bu hesaba para göndermeyin.",
      },
    },
    deadlineLabel: "Son ödeme zamanı",
    deadlineFormat: "{day} {month} {year} {time}",
    timeLeft: "Kalan süre",
    timeUp: "Süre doldu",
    instructions: "Alıcı bilgileri",
    bankName: "Banka",
    accountName: "Alıcı adı",
    iban: "IBAN",
    reference: "Açıklama (referans kodu)",
    referenceNote: "Bu kodu havale açıklamasına mutlaka yazın; ödemeniz bu kodla eşleştirilir.",
    copy: "Kopyala",
    copied: "Kopyalandı",
    copyFailed: "Kopyalanamadı",
    copyNames: { iban: "IBAN", reference: "Referans kodu" },
    copiedAnnouncement: "{name} kopyalandı",
    copyFailedAnnouncement: "{name} kopyalanamadı",
    returnToMerchant: "{merchant} sitesine dön",
    returnToShop: "Mağazaya dön",
    noAccountTitle: "Ödeme bilgileri şu anda gösterilemiyor",
    noAccountText: "Bu ödeme için bir hesap atanamadı. Satıcı sizinle iletişime geçecek; dilerseniz satıcıyla iletişime geçebilirsiniz.",
    sandboxBadge: "TEST",
    sandboxText: "Bu bir test ödemesidir; gerçek para gönderilmez.",
    simulate: "Ödemeyi simüle et",
    simulating: "Simüle ediliyor…",
    simulateFailed: "Ödeme simüle edilemedi",
    connectionLost: "Bağlantı sorunu; durum yeniden deneniyor…",
    invalidTitle: "Geçersiz ödeme bağlantısı",
    invalidText: "Bu ödeme bağlantısı geçerli değil veya süresi dolmuş. Ödemeye yeniden başlamak için satıcının sitesine dönün.",
    unavailableTitle: "Ödeme sayfası şu anda açılamıyor",
    unavailableText: "Lütfen birkaç dakika sonra sayfayı yenileyin.",
  },
  en: {
    locale: "en-US",
    pageTitle: "Payment",
    heading: "Pay by bank transfer",
    languageSwitch: "Language",
    merchantLabel: "Merchant",
    orderLabel: "Order reference",
    amountLabel: "Amount",
    status: {
      pending: {
        title: "Waiting for your payment",
        text: "Send exactly this amount by bank transfer (havale or EFT) to the account below. This page updates by itself when your payment arrives.",
      },
      completed: {
        title: "Payment received",
        text: "Thank you, your payment is confirmed. You can close this page.",
        textWithReturn: "Thank you, your payment is confirmed. You can go back to the merchant's site with the link below.",
      },
      expired: {
        title: "This payment has expired",
        text: "Do not send money to this account any more. You can start a new payment on the merchant's site.",
        textWithReturn: "Do not send money to this account any more. Go back to the merchant's site with the link below to start a new payment.",
      },
      failed: {
        title: "Payment failed",
        text: "The payment could not be completed. Please contact the merchant.",
      },
      cancelled: {
        title: "Payment cancelled",
        text: "This payment was cancelled. Do not send money to this account.",
      },
    },
    deadlineLabel: "Pay by",
    deadlineFormat: "{day} {month} {year}, {time} (Türkiye time)",
    timeLeft: "Time left",
    timeUp: "Time is up",
    instructions: "Transfer to",
    bankName: "Bank",
    accountName: "Account holder",
    iban: "IBAN",
    reference: "Description (reference code)",
    referenceNote: "Write this code in the transfer description; it is how your payment is matched.",
    copy: "Copy",
    copied: "Copied",
    copyFailed: "Could not copy",
    copyNames: { iban: "IBAN", reference: "Reference code" },
    copiedAnnouncement: "{name} copied",
    copyFailedAnnouncement: "{name} could not be copied",
    returnToMerchant: "Back to {merchant}",
    returnToShop: "Back to the shop",
    noAccountTitle: "Payment details are not available",
    noAccountText: "No account could be assigned to this payment. The merchant will contact you, or you can contact the merchant.",
    sandboxBadge: "TEST",
    sandboxText: "This is a test payment; no real money moves.",
    simulate: "Simulate payment",
    simulating: "Simulating…",
    simulateFailed: "The payment could not be simulated",
    connectionLost: "Connection problem; retrying…",
    invalidTitle: "Invalid payment link",
    invalidText: "This payment link is not valid or has expired. Return to the merchant's site to start the payment again.",
    unavailableTitle: "The payment page is temporarily unavailable",
    unavailableText: "Please reload this page in a few minutes.",
  },
};

/**
 * A template with its {blanks} filled, in one pass: a value that itself contains "{time}"
 * (a merchant's name can be anything) is never filled again. An unknown blank stays as written.
 */
export function fillText(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([a-z]+)\}/g, (blank, name: string) => (Object.hasOwn(values, name) ? values[name]! : blank));
}

/** The status texts of one page: with or without the sentence that points to the return link. */
export function statusTexts(t: CheckoutTexts, hasReturnLink: boolean): Record<CheckoutStatus, StatusText> {
  const resolve = (s: StatusTexts): StatusText => ({ title: s.title, text: hasReturnLink && s.textWithReturn !== undefined ? s.textWithReturn : s.text });
  return {
    pending: resolve(t.status.pending),
    completed: resolve(t.status.completed),
    expired: resolve(t.status.expired),
    failed: resolve(t.status.failed),
    cancelled: resolve(t.status.cancelled),
  };
}

/** "<merchant> sitesine dön" / "Back to <merchant>", or the shop in general when the merchant has no display name. */
export function returnLinkText(t: CheckoutTexts, merchantName: string | null): string {
  return merchantName === null ? t.returnToShop : fillText(t.returnToMerchant, { merchant: merchantName });
}

function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}

/**
 * `?lang=` wins when it names a language we have; otherwise the first language of
 * Accept-Language (by q, then order) that we have; otherwise Turkish.
 */
export function chooseLanguage(lang: unknown, acceptLanguage: string | undefined): Language {
  if (typeof lang === "string" && isLanguage(lang.toLowerCase())) return lang.toLowerCase() as Language;
  const ranked = (acceptLanguage ?? "")
    .split(",")
    .slice(0, 50)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { primary: tag.trim().toLowerCase().split("-")[0] ?? "", weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((entry) => entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const entry of ranked) {
    if (isLanguage(entry.primary)) return entry.primary;
  }
  return DEFAULT_LANGUAGE;
}
