/** The languages of the console: Turkish (the default) and English. */
export const LANGUAGES = ["tr", "en"] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = "tr";

export function isLanguage(value: unknown): value is Language {
  return typeof value === "string" && (LANGUAGES as readonly string[]).includes(value);
}

/** English is the source of the keys; every language must name each of them (the type says so). */
const en = {
  "app.title": "Payments console",
  "nav.skip": "Skip to content",
  "nav.home": "Home",
  "nav.signOut": "Sign out",
  "nav.language": "Language",
  "nav.signedInAs": "Signed in as {name} ({role})",
  "signIn.title": "Sign in",
  "signIn.email": "Email",
  "signIn.password": "Password",
  "signIn.totp": "Authenticator code",
  "signIn.totpHint": "Six digits from your authenticator app, if you have enrolled one.",
  "signIn.submit": "Sign in",
  "signIn.invalid": "The email or password is not right, or the account is disabled.",
  "signIn.throttled": "Too many failed attempts. Try again in {minutes} minutes.",
  "signIn.totpRequired": "Enter the code from your authenticator app.",
  "signIn.totpInvalid": "That code is not valid. Enter the current code from your authenticator app.",
  "signIn.passwordSet": "Your password is set. Sign in with it.",
  "signIn.signedOut": "You have signed out.",
  "signIn.expired": "Your session ended. Sign in again.",
  "setPassword.title": "Set your password",
  "setPassword.intro": "Choose a password of at least {min} characters for {email}.",
  "setPassword.password": "New password",
  "setPassword.confirm": "New password again",
  "setPassword.submit": "Set password",
  "setPassword.tooShort": "The password must be at least {min} characters long.",
  "setPassword.tooLong": "The password must be at most {max} characters long.",
  "setPassword.mismatch": "The two passwords are not the same.",
  "setPassword.invalidLink": "This link is not valid: it has expired or was used already. Ask an admin for a new one.",
  "totp.title": "Two-step verification",
  "totp.required": "Your role needs two-step verification. Enrol an authenticator app before you continue.",
  "totp.intro": "Add this key to your authenticator app (manual entry, time-based), then enter the code it shows.",
  "totp.key": "Key",
  "totp.uri": "Setup link for apps that accept one",
  "totp.code": "Code from the app",
  "totp.submit": "Confirm",
  "totp.invalid": "That code is not valid. Check the key and enter the current code.",
  "totp.enrolled": "Two-step verification is on for your account.",
  "home.title": "Console",
  "home.intro": "Welcome, {name}. Your role is {role}.",
  "home.empty": "Pages for operators' work come here.",
  "error.title": "Something went wrong",
  "error.notFound": "There is no page here.",
  "error.forbidden": "You may not do this.",
  "error.csrf": "The form expired or did not come from this console. Reload the page and try again.",
  "error.internal": "The console could not answer. Try again in a moment.",
  "error.summary": "There is a problem",
} as const;

export type TextKey = keyof typeof en;

const tr: Record<TextKey, string> = {
  "app.title": "Ödeme konsolu",
  "nav.skip": "İçeriğe geç",
  "nav.home": "Ana sayfa",
  "nav.signOut": "Çıkış yap",
  "nav.language": "Dil",
  "nav.signedInAs": "{name} olarak oturum açık ({role})",
  "signIn.title": "Oturum aç",
  "signIn.email": "E-posta",
  "signIn.password": "Parola",
  "signIn.totp": "Doğrulama kodu",
  "signIn.totpHint": "Kaydettiyseniz, doğrulama uygulamanızdaki altı haneli kod.",
  "signIn.submit": "Oturum aç",
  "signIn.invalid": "E-posta veya parola doğru değil ya da hesap devre dışı.",
  "signIn.throttled": "Çok fazla başarısız deneme. {minutes} dakika sonra yeniden deneyin.",
  "signIn.totpRequired": "Doğrulama uygulamanızdaki kodu girin.",
  "signIn.totpInvalid": "Bu kod geçerli değil. Doğrulama uygulamanızdaki güncel kodu girin.",
  "signIn.passwordSet": "Parolanız belirlendi. Onunla oturum açın.",
  "signIn.signedOut": "Oturumu kapattınız.",
  "signIn.expired": "Oturumunuz sona erdi. Yeniden oturum açın.",
  "setPassword.title": "Parolanızı belirleyin",
  "setPassword.intro": "{email} için en az {min} karakterlik bir parola seçin.",
  "setPassword.password": "Yeni parola",
  "setPassword.confirm": "Yeni parola (tekrar)",
  "setPassword.submit": "Parolayı belirle",
  "setPassword.tooShort": "Parola en az {min} karakter olmalı.",
  "setPassword.tooLong": "Parola en fazla {max} karakter olmalı.",
  "setPassword.mismatch": "İki parola aynı değil.",
  "setPassword.invalidLink": "Bu bağlantı geçerli değil: süresi dolmuş ya da kullanılmış. Bir yöneticiden yenisini isteyin.",
  "totp.title": "İki adımlı doğrulama",
  "totp.required": "Rolünüz iki adımlı doğrulama gerektiriyor. Devam etmeden önce bir doğrulama uygulaması kaydedin.",
  "totp.intro": "Bu anahtarı doğrulama uygulamanıza ekleyin (elle giriş, zamana dayalı), ardından gösterdiği kodu girin.",
  "totp.key": "Anahtar",
  "totp.uri": "Bağlantı kabul eden uygulamalar için kurulum bağlantısı",
  "totp.code": "Uygulamadaki kod",
  "totp.submit": "Onayla",
  "totp.invalid": "Bu kod geçerli değil. Anahtarı kontrol edip güncel kodu girin.",
  "totp.enrolled": "Hesabınızda iki adımlı doğrulama açık.",
  "home.title": "Konsol",
  "home.intro": "Hoş geldiniz, {name}. Rolünüz: {role}.",
  "home.empty": "Operatörlerin iş sayfaları buraya gelecek.",
  "error.title": "Bir sorun oluştu",
  "error.notFound": "Burada bir sayfa yok.",
  "error.forbidden": "Bunu yapamazsınız.",
  "error.csrf": "Formun süresi doldu ya da bu konsoldan gelmedi. Sayfayı yenileyip yeniden deneyin.",
  "error.internal": "Konsol yanıt veremedi. Biraz sonra yeniden deneyin.",
  "error.summary": "Bir sorun var",
};

const TEXTS: Record<Language, Record<TextKey, string>> = { en, tr };

/** The text of `key` in `lang`, with `{name}` placeholders filled in (plain text: the caller's template escapes it). */
export function text(lang: Language, key: TextKey, params: Record<string, string | number> = {}): string {
  return TEXTS[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
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
