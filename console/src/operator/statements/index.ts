import { DepositService, type ImportStatementResponse } from "@payments/contracts/deposit";
import type { ConsoleContext } from "../../context.js";
import { html, trusted, type SafeHtml } from "../../shared/html.js";
import { alert, field } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import type { ConsoleContextKoa } from "../../state.js";
import { roleAtLeast } from "@payments/access";
import { csrfField, operatorRoute, refusalOf, type SignedIn, workPage } from "../operator-call.js";

/** The formats ImportStatement reads. */
const FORMATS = [
  { value: "mt940", label: "MT940" },
  { value: "camt053", label: "ISO 20022 camt.053" },
  { value: "camt054", label: "ISO 20022 camt.054" },
] as const;

/**
 * The file goes up as it is (multipart/form-data, up to CONSOLE_UPLOAD_LIMIT); the text area
 * is the way to paste a statement instead. With JavaScript, a chosen file's name is put in the
 * file-name field and its format guessed from its start. A constant: no request data in it.
 */
const FILE_SCRIPT = trusted(`
(function () {
  var input = document.getElementById("statement-file");
  var name = document.getElementById("field-fileName");
  var format = document.getElementById("field-format");
  if (!input) return;
  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    if (!file) return;
    if (name && !name.value) name.value = file.name;
    file.slice(0, 4096).text().then(function (text) {
      if (format) format.value = /<Document[^>]*camt\\.054/.test(text) ? "camt054" : /<Document/.test(text) ? "camt053" : "mt940";
    });
  });
})();
`);

function importForm(who: SignedIn, form: Record<string, string>, error?: string): SafeHtml {
  const chosen = form.format ?? "mt940";
  return html`<form method="post" action="/statements" enctype="multipart/form-data" class="card">
${csrfField(who)}
<label for="statement-file">${who.t("statements.fileUpload")}</label>
<p class="hint" id="statement-file-hint">${who.t("statements.fileUploadHint")}</p>
<input id="statement-file" name="file" type="file" accept=".sta,.mt940,.txt,.xml,.940" aria-describedby="${error ? "statement-file-hint field-content-error" : "statement-file-hint"}"${error ? html` aria-invalid="true"` : null}>
<label for="field-format">${who.t("statements.format")}</label>
<select id="field-format" name="format">${FORMATS.map((f) => html`<option value="${f.value}"${f.value === chosen ? html` selected` : null}>${f.label}</option>`)}</select>
${field({ name: "fileName", label: who.t("statements.fileName"), value: form.fileName ?? "", hint: who.t("statements.fileNameHint") })}
<label for="field-content">${who.t("statements.content")}</label>
<p class="hint" id="field-content-hint">${who.t("statements.contentHint")}</p>
<textarea id="field-content" name="content" aria-describedby="${error ? "field-content-hint field-content-error" : "field-content-hint"}"${error ? html` aria-invalid="true"` : null}>${form.content ?? ""}</textarea>
${error ? html`<p class="error" id="field-content-error">${error}</p>` : null}
<button type="submit">${who.t("statements.submit")}</button>
</form>`;
}

function result(who: SignedIn, res: ImportStatementResponse, fileName: string): SafeHtml {
  const row = (key: Parameters<SignedIn["t"]>[0], n: number) => html`<tr><th scope="row">${who.t(key)}</th><td class="num">${n}</td></tr>`;
  return html`<div class="notice" role="status">${who.t("statements.done", { name: fileName || who.t("statements.unnamed") })}</div>
<table><caption>${who.t("statements.result")}</caption><tbody>
${row("statements.imported", res.imported)}${row("statements.matched", res.matched)}${row("statements.review", res.review)}${row("statements.unmatched", res.unmatched)}${row("statements.returned", res.returned)}${row("statements.duplicates", res.duplicates)}
</tbody></table>
${res.skipped.length > 0 ? html`<h2>${who.t("statements.skipped")}</h2><ul>${res.skipped.map((s) => html`<li>${s}</li>`)}</ul>` : null}
${res.review + res.unmatched > 0 ? html`<p><a href="/transfers">${who.t("statements.toQueue")}</a></p>` : null}`;
}

/** Bank statements: a file (MT940, camt.053, camt.054) imported through DepositService.ImportStatement, and what it did. */
export function statementPages(deps: ConsoleContext): ConsoleRoute[] {
  const page = (ctx: ConsoleContextKoa, who: SignedIn, body: SafeHtml, status = 200) =>
    workPage(ctx, who, { title: who.t("statements.title"), body, script: FILE_SCRIPT }, status);
  return [
    operatorRoute(deps, { method: "GET", path: "/statements" }, async (ctx, who) =>
      page(ctx, who, html`<p>${who.t("statements.intro")}</p>${roleAtLeast(who.operator.role, "finance") ? importForm(who, {}) : html`<p class="notice" role="note">${who.t("statements.financeOnly")}</p>`}`),
    ),
    operatorRoute(deps, { method: "POST", path: "/statements", upload: true }, async (ctx, who) => {
      const form = ctx.state.form ?? {};
      // A file sent wins over pasted text; either is sent to the service as the bank's bytes.
      const upload = ctx.state.upload;
      const pasted = form.content ?? "";
      const format = FORMATS.some((f) => f.value === form.format) ? (form.format as string) : "mt940";
      const fileName = ((form.fileName ?? "").trim() || (upload?.fileName ?? "")).slice(0, 200);
      if (!upload && !pasted.trim()) return page(ctx, who, html`${alert(who.t("statements.empty"))}${importForm(who, form, who.t("statements.empty"))}`, 400);
      const content = upload ? new Uint8Array(upload.content) : new TextEncoder().encode(pasted);
      try {
        const res = await who.client(DepositService).importStatement({ format, content, fileName });
        page(ctx, who, html`${result(who, res, fileName)}<h2>${who.t("statements.another")}</h2>${importForm(who, {})}`);
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        page(ctx, who, html`${alert(refusal.message)}${importForm(who, { ...form, fileName })}`, refusal.status);
      }
    }),
  ];
}
