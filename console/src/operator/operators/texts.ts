import { defineTexts } from "../../shared/texts.js";
import { PEOPLE_EN, PEOPLE_TR } from "../people-texts.js";

/** The operator accounts page (admins): the list, the invite, role changes, disabling and new sign-in links. */
export const operatorTexts = defineTexts(
  {
    ...PEOPLE_EN,
    title: "Operator accounts",
    intro: "Who may sign in to this console. Inviting someone, raising a role, enabling an account and a new sign-in link each wait for a second admin, who is given the one-time link; lowering a role and disabling are done at once.",
    caption: "Operator accounts, in the order they were made",
    you: "you",
    more: "More accounts",
    "invite.title": "Invite an operator",
    "invite.hint": "A second admin approves it and is given the one-time link to hand over; you are not.",
    "invite.email": "Email",
    "invite.name": "Name",
    "invite.role": "Role",
    "role.submit": "Change the role",
    "role.label": "New role for {name}",
    enable: "Enable",
    back: "Back to the operator accounts",
    "what.invite": "Invite {email} as {role}",
    "what.role": "Role of {email} to {role}",
    "what.disable": "Disable {email} (their sessions are ended)",
    "what.enable": "Enable {email}",
    "error.INVALID_EMAIL": "The email is not an email address.",
    "error.INVALID_NAME": "The name must be 1 to 200 characters.",
    "error.INVALID_ROLE": "Choose one of the roles.",
    "error.OPERATOR_EXISTS": "An operator with this email exists already.",
    "error.LAST_ADMIN": "This is the last enabled admin: make another admin first.",
    "error.OWN_ACCOUNT": "You cannot disable your own account.",
    "error.NOT_FOUND": "No such operator account.",
  },
  {
    ...PEOPLE_TR,
    title: "Operatör hesapları",
    intro: "Bu konsola kimlerin girebileceği. Birini davet etmek, bir rolü yükseltmek, bir hesabı etkinleştirmek ve yeni giriş bağlantısı göndermek ikinci bir yöneticinin onayını bekler; tek kullanımlık bağlantı onaylayana verilir. Bir rolü düşürmek ve devre dışı bırakmak hemen yapılır.",
    caption: "Operatör hesapları, oluşturulma sırasıyla",
    you: "siz",
    more: "Diğer hesaplar",
    "invite.title": "Operatör davet et",
    "invite.hint": "İkinci bir yönetici onaylar ve iletilecek tek kullanımlık bağlantı ona verilir; size verilmez.",
    "invite.email": "E-posta",
    "invite.name": "Ad",
    "invite.role": "Rol",
    "role.submit": "Rolü değiştir",
    "role.label": "{name} için yeni rol",
    enable: "Etkinleştir",
    back: "Operatör hesaplarına dön",
    "what.invite": "{email} kişisini {role} olarak davet et",
    "what.role": "{email} rolü: {role}",
    "what.disable": "{email} hesabını devre dışı bırak (oturumları sonlandırılır)",
    "what.enable": "{email} hesabını etkinleştir",
    "error.INVALID_EMAIL": "E-posta geçerli bir adres değil.",
    "error.INVALID_NAME": "Ad 1 ile 200 karakter arasında olmalı.",
    "error.INVALID_ROLE": "Rollerden birini seçin.",
    "error.OPERATOR_EXISTS": "Bu e-postayla bir operatör zaten var.",
    "error.LAST_ADMIN": "Bu, etkin son yönetici: önce başka bir yönetici atayın.",
    "error.OWN_ACCOUNT": "Kendi hesabınızı devre dışı bırakamazsınız.",
    "error.NOT_FOUND": "Böyle bir operatör hesabı yok.",
  },
);

export type OperatorTextKey = Parameters<typeof operatorTexts>[1];

const ERRORS = new Set(["INVALID_EMAIL", "INVALID_NAME", "INVALID_ROLE", "OPERATOR_EXISTS", "LAST_ADMIN", "OWN_ACCOUNT", "NOT_FOUND"]);

/** A refused change's code in the page's language (the console's own codes; another one with its message). */
export function refusalText(lang: Parameters<typeof operatorTexts>[0], code: string, message: string): string {
  return ERRORS.has(code) ? operatorTexts(lang, `error.${code}` as OperatorTextKey) : operatorTexts(lang, "error.other", { message });
}
