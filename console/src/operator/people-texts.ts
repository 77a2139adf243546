/**
 * The words both people's pages say alike (operator accounts, a merchant's dashboard users): the
 * list's columns and states, the new sign-in link, and what a change waiting or done says. Each
 * page's dictionary (`operators/texts.ts`, `merchant-users/texts.ts`) spreads them into its own.
 */
export const PEOPLE_EN = {
  name: "Name",
  email: "Email",
  role: "Role",
  totp: "Authenticator",
  lastSignIn: "Last sign-in",
  state: "State",
  actions: "Change",
  totpOn: "On",
  totpOff: "Off",
  never: "Never",
  active: "Active",
  disabled: "Disabled",
  disable: "Disable",
  reset: "Send a new sign-in link",
  "reset.totp": "Also remove their authenticator (a lost phone)",
  waiting: "{what}: this waits for a second admin's approval.",
  done: "Done: {what}.",
  linkOnce: "The one-time link for {email} (valid until {until}). It is shown only now: hand it to them, to no one else.",
  "what.reset": "A new sign-in link for {email}",
  "error.other": "The change was refused: {message}",
} as const;

export const PEOPLE_TR: { [K in keyof typeof PEOPLE_EN]: string } = {
  name: "Ad",
  email: "E-posta",
  role: "Rol",
  totp: "Doğrulama uygulaması",
  lastSignIn: "Son giriş",
  state: "Durum",
  actions: "Değiştir",
  totpOn: "Açık",
  totpOff: "Kapalı",
  never: "Hiç",
  active: "Etkin",
  disabled: "Devre dışı",
  disable: "Devre dışı bırak",
  reset: "Yeni giriş bağlantısı gönder",
  "reset.totp": "Doğrulama uygulamasını da kaldır (kaybolan telefon)",
  waiting: "{what}: bu, ikinci bir yöneticinin onayını bekliyor.",
  done: "Yapıldı: {what}.",
  linkOnce: "{email} için tek kullanımlık bağlantı ({until} tarihine kadar geçerli). Yalnızca şimdi gösterilir: yalnızca ilgili kişiye iletin.",
  "what.reset": "{email} için yeni giriş bağlantısı",
  "error.other": "Değişiklik reddedildi: {message}",
};
