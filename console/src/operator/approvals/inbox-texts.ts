import { defineTexts } from "../../shared/texts.js";

/**
 * The texts of the approvals inbox (every service's approvals and the console's own account
 * changes in one list), of an approval's real outcome (its code in words: shared/service-texts.ts
 * `codeText`), and of what waits in place of a page's decision forms.
 */
const en = {
  caption: "Everything that waits for a second person (the five services and the console's account changes), newest first",
  where: "Kept by",
  "where.merchant": "Merchant service",
  "where.bank-catalog": "Bank catalogue",
  "where.deposit": "Deposit service",
  "where.payout": "Payout service",
  "where.callback-sender": "Callback service",
  "where.console": "Console (account change)",
  ownLine: "You asked for this. A second person must approve it; you may only withdraw it.",
  ran: "You approved it and it ran: {what}.",
  refused: "You approved it, but the service refused to run it: {reason}. Nothing was changed by it.",
  running: "You approved it; it is still running.",
  outcomeRefused: "Refused by the service: {reason}",
  waitingForms: "This waits for a second person's approval ({what}), asked by {maker} at {time}. Until it is decided nothing else is decided here:",
  waitingOwn: "You asked for this ({what}) at {time}. A second person must approve it:",
};

export const inboxTexts = defineTexts(en, {
  caption: "İkinci bir kişiyi bekleyen her şey (beş servis ve konsolun hesap değişiklikleri), en yenisi önce",
  where: "Tutan",
  "where.merchant": "Üye işyeri servisi",
  "where.bank-catalog": "Banka kataloğu",
  "where.deposit": "Yatırma servisi",
  "where.payout": "Ödeme servisi",
  "where.callback-sender": "Bildirim servisi",
  "where.console": "Konsol (hesap değişikliği)",
  ownLine: "Bunu siz istediniz. İkinci bir kişinin onaylaması gerekir; siz yalnızca geri çekebilirsiniz.",
  ran: "Onayladınız ve çalıştırıldı: {what}.",
  refused: "Onayladınız, ancak servis çalıştırmayı reddetti: {reason}. Hiçbir şey değişmedi.",
  running: "Onayladınız; hâlâ çalışıyor.",
  outcomeRefused: "Servis reddetti: {reason}",
  waitingForms: "Bu, ikinci bir kişinin onayını bekliyor ({what}); {time} tarihinde {maker} istedi. Karara bağlanana kadar burada başka karar verilmez:",
  waitingOwn: "Bunu {time} tarihinde siz istediniz ({what}). İkinci bir kişinin onaylaması gerekir:",
});

export type InboxKey = Parameters<typeof inboxTexts>[1];
