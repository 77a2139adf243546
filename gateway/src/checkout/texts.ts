import type { CheckoutStatus } from "./view.js";

/** The languages of the checkout page; Turkish is the default. */
export const LANGUAGES = ["tr", "en"] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = "tr";

export interface StatusText {
  title: string;
  text: string;
}

/** Every word the page shows, per language. The inline script gets the same object, so a status change needs no reload. */
export interface CheckoutTexts {
  /** BCP 47 tag for Intl and the html lang attribute. */
  locale: string;
  pageTitle: string;
  heading: string;
  languageSwitch: string;
  amountLabel: string;
  status: Record<CheckoutStatus, StatusText>;
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

export const TEXTS: Readonly<Record<Language, CheckoutTexts>> = {
  tr: {
    locale: "tr-TR",
    pageTitle: "Ödeme",
    heading: "Havale / EFT ile ödeme",
    languageSwitch: "Dil",
    amountLabel: "Tutar",
    status: {
      pending: {
        title: "Ödemeniz bekleniyor",
        text: "Aşağıdaki hesaba tam tutarı havale veya EFT ile gönderin. Ödemeniz ulaştığında bu sayfa kendiliğinden güncellenir.",
      },
      completed: {
        title: "Ödeme alındı",
        text: "Teşekkürler, ödemeniz onaylandı. Satıcının sitesine dönebilirsiniz.",
      },
      expired: {
        title: "Ödeme süresi doldu",
        text: "Bu hesaba artık para göndermeyin. Yeni bir ödeme için satıcının sitesine dönün.",
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
    amountLabel: "Amount",
    status: {
      pending: {
        title: "Waiting for your payment",
        text: "Send exactly this amount by bank transfer (havale or EFT) to the account below. This page updates by itself when your payment arrives.",
      },
      completed: {
        title: "Payment received",
        text: "Thank you, your payment is confirmed. You can return to the merchant's site.",
      },
      expired: {
        title: "This payment has expired",
        text: "Do not send money to this account any more. Return to the merchant's site to start a new payment.",
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
