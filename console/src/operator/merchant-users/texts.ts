import { defineTexts } from "../../shared/texts.js";
import { PEOPLE_EN, PEOPLE_TR } from "../people-texts.js";

/** A merchant's dashboard users as our operators see them (support reads; an admin acts). */
export const merchantUserTexts = defineTexts(
  {
    ...PEOPLE_EN,
    title: "Dashboard users of {merchant}",
    intro: "The people of this merchant who sign in to its dashboard. Support reads this list; an admin may send a new sign-in link (it waits for a second admin, who is given the link) or disable a user (at once: their sessions and unused links end).",
    caption: "Dashboard users of {merchant}",
    empty: "This merchant has no dashboard users yet.",
    back: "Back to the merchant",
    link: "Dashboard users",
    invite: "Invite a user of this merchant: on the merchant's page.",
    "what.disable": "Disable {email}",
    "error.NOT_FOUND": "No such user of this merchant.",
    "error.LAST_OWNER": "This is the merchant's last owner: the merchant makes another owner first.",
  },
  {
    ...PEOPLE_TR,
    title: "{merchant} panel kullanıcıları",
    intro: "Bu üye işyerinin panele giren kişileri. Destek bu listeyi okur; bir yönetici yeni giriş bağlantısı gönderebilir (ikinci bir yöneticinin onayını bekler, bağlantı onaylayana verilir) veya bir kullanıcıyı devre dışı bırakabilir (hemen: oturumları ve kullanılmamış bağlantıları sona erer).",
    caption: "{merchant} panel kullanıcıları",
    empty: "Bu üye işyerinin henüz panel kullanıcısı yok.",
    back: "Üye işyerine dön",
    link: "Panel kullanıcıları",
    invite: "Bu üye işyerine kullanıcı davet etmek için: üye işyerinin sayfası.",
    "what.disable": "{email} kullanıcısını devre dışı bırak",
    "error.NOT_FOUND": "Bu üye işyerinin böyle bir kullanıcısı yok.",
    "error.LAST_OWNER": "Bu, üye işyerinin son sahibi: önce üye işyeri başka bir sahip atamalı.",
  },
);

export type MerchantUserTextKey = Parameters<typeof merchantUserTexts>[1];
