import { defineTexts } from "../../shared/texts.js";

export const totp = defineTexts(
  {
    "totp.title": "Two-step verification",
    "totp.required": "Two-step verification is required.",
    "totp.intro": "Add this key to your authenticator app (manual entry, time-based), then enter the code it shows. From then on, signing in asks for the code too.",
    "totp.key": "Key",
    "totp.uri": "Setup link for apps that accept one",
    "totp.code": "Code from the app",
    "totp.submit": "Turn on",
    "totp.invalid": "That code is not valid. Check the key and enter the current code.",
    "totp.enrolled": "Two-step verification is on for your account.",
    "totp.remove.intro": "To turn it off, enter the current code from your authenticator app.",
    "totp.remove.code": "Code from the app",
    "totp.remove.submit": "Turn off two-step verification",
    "totp.removed": "Two-step verification is off. You may turn it on again with a new key.",
  },
  {
    "totp.title": "İki adımlı doğrulama",
    "totp.required": "İki adımlı doğrulama gerekli.",
    "totp.intro": "Bu anahtarı doğrulama uygulamanıza ekleyin (elle giriş, zamana dayalı), ardından gösterdiği kodu girin. Bundan sonra giriş yaparken kod da istenir.",
    "totp.key": "Anahtar",
    "totp.uri": "Bağlantı kabul eden uygulamalar için kurulum bağlantısı",
    "totp.code": "Uygulamadaki kod",
    "totp.submit": "Aç",
    "totp.invalid": "Bu kod geçerli değil. Anahtarı kontrol edip güncel kodu girin.",
    "totp.enrolled": "Hesabınızda iki adımlı doğrulama açık.",
    "totp.remove.intro": "Kapatmak için doğrulama uygulamanızdaki güncel kodu girin.",
    "totp.remove.code": "Uygulamadaki kod",
    "totp.remove.submit": "İki adımlı doğrulamayı kapat",
    "totp.removed": "İki adımlı doğrulama kapalı. Yeni bir anahtarla yeniden açabilirsiniz.",
  },
);
