import { defineTexts } from "../../shared/texts.js";

/** The words of an operator's invitation of a merchant's dashboard user, from the merchant's page. */
export const inviteTexts = defineTexts(
  {
    "invite.email": "Email",
    "invite.name": "Name (optional)",
    "invite.role": "Role",
    "operator.invite.title": "Invite a merchant user",
    "operator.invite.hint": "Someone of this merchant, to its merchant dashboard: they get a one-time link to set a password.",
    "operator.invite.done": "{email} is invited to {merchant}'s dashboard. Give them this one-time link (valid until {until}); it is shown only now:",
    "operator.invite.waiting": "Inviting {email} to {merchant}'s dashboard waits for a second admin. Whoever approves it gets the one-time link to give them.",
    "operator.back": "Back to the merchant",
    "operator.invite.badRole": "Choose the role: owner, developer, finance or viewer.",
  },
  {
    "invite.email": "E-posta",
    "invite.name": "Ad (isteğe bağlı)",
    "invite.role": "Rol",
    "operator.invite.title": "Üye işyeri kullanıcısı davet et",
    "operator.invite.hint": "Bu üye işyerinden biri, üye işyeri paneline: parola belirlemesi için tek kullanımlık bir bağlantı alır.",
    "operator.invite.done": "{email}, {merchant} paneline davet edildi. Bu tek kullanımlık bağlantıyı iletin ({until} tarihine kadar geçerli); yalnızca şimdi gösterilir:",
    "operator.invite.waiting": "{email} kullanıcısının {merchant} paneline daveti ikinci bir yöneticinin onayını bekliyor. Onaylayan kişi, iletilecek tek kullanımlık bağlantıyı alır.",
    "operator.back": "Üye işyerine dön",
    "operator.invite.badRole": "Rolü seçin: sahip, geliştirici, finans ya da izleyici.",
  },
);
