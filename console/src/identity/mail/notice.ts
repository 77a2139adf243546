import { html, type SafeHtml } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import { defineTexts } from "../../shared/texts.js";
import { formatTime } from "../../shared/format.js";
import type { LinkDelivery } from "./deliver.js";

const noticeTexts = defineTexts(
  {
    sent: "The one-time link was sent by e-mail to {email}. It works once, until {until}; it is not shown here.",
    failed: "The e-mail to {email} could not be sent: the mail server did not accept it. The link is still valid until {until}: hand it over yourself (it is shown below this once), or make a new one later.",
    show: "Show the one-time link",
  },
  {
    sent: "Tek kullanımlık bağlantı {email} adresine e-postayla gönderildi. Yalnızca bir kez ve {until} tarihine kadar geçerlidir; burada gösterilmez.",
    failed: "{email} adresine e-posta gönderilemedi: e-posta sunucusu kabul etmedi. Bağlantı {until} tarihine kadar geçerli: kendiniz iletin (aşağıda bu kez gösterilir) ya da daha sonra yenisini oluşturun.",
    show: "Tek kullanımlık bağlantıyı göster",
  },
);

/**
 * What a page says of a one-time link it made: `shown` (no mail) is the page's own notice with
 * the link, as before mail; `sent` names the address and never the link (a bearer secret);
 * `failed` says so and offers the link this once, folded, for the maker to hand over. `lead`
 * is what the page says first (the change was made).
 */
export function linkNotice(lang: Language, delivery: LinkDelivery, link: { url: string; expiresAt: number }, options: { codeId: string; shown: SafeHtml; lead?: string }): SafeHtml {
  if (delivery.status === "shown") return options.shown;
  const params = { email: delivery.to, until: formatTime(new Date(link.expiresAt), lang) };
  const lead = options.lead ? html`<p>${options.lead}</p>` : null;
  if (delivery.status === "sent") return html`<div class="notice" role="status" id="${`${options.codeId}-mailed`}">${lead}<p>${noticeTexts(lang, "sent", params)}</p></div>`;
  return html`<div class="alert" role="alert" id="${`${options.codeId}-mail-failed`}">${lead}<p>${noticeTexts(lang, "failed", params)}</p>
<details><summary>${noticeTexts(lang, "show")}</summary><p><code id="${options.codeId}">${link.url}</code></p></details></div>`;
}
