/**
 * What Primer does not have and the console needs, written with Primer's tokens: the page frame
 * (header, main), cards and notices, the facts lists, and tables that fit — at 1280 px a table
 * fits its column (no word is broken inside a cell: cells wrap at spaces only, and a `<code>` id
 * breaks only when it alone is wider than its cell), and under 48rem every table whose cells
 * carry `data-label` (shared/table.ts; the layout labels every table) becomes one card per row,
 * "label value" lines. The merchant dashboard changes only the brand colour (`--console-brand`).
 */
export const CONSOLE_RULES = `
:root{--console-brand:#1f3a5f;--console-brand-fg:#fff}
.merchant-header{--console-brand:#0e4f4a}
.cell-sub-label{font-weight:600}
body{background:var(--bgColor-muted);color:var(--fgColor-default);font-size:14px;line-height:1.5}
a:not(.btn){padding-block:.3em}
.skip{position:absolute;left:-999px}
.skip:focus{left:1rem;top:1rem;z-index:40;background:var(--bgColor-default);padding:.5rem}
.Header.console-header{flex-wrap:wrap;gap:.5rem 1.25rem;padding:.75rem 1.5rem;background:var(--console-brand);color:var(--console-brand-fg)}
.console-header a,.console-header .Header-link{color:var(--console-brand-fg);text-decoration:underline;text-underline-offset:2px}
.console-header p,.console-header form{margin:0}
.console-header nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0;padding:0}
.console-header a[aria-current]{font-weight:600;text-decoration-thickness:3px}
.console-header .btn{color:var(--fgColor-default)}
.sandbox-band{margin:0;padding:.4rem 1.5rem;background:var(--bgColor-attention-muted);color:var(--fgColor-attention);font-weight:600}
main{max-width:90rem;margin:1.5rem auto;padding:0 1.5rem}
main h1{margin:0 0 1rem;overflow-wrap:break-word}
main h2{margin:1.75rem 0 .75rem;overflow-wrap:break-word}
main h3{margin:.25rem 0 .5rem}
main p,main dl,main pre,main details{margin:0 0 .75rem}
main ul,main ol{padding-left:1.5rem;margin:0 0 .75rem}
main nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;padding:0}
.card{background:var(--bgColor-default);border:1px solid var(--borderColor-default);border-radius:var(--borderRadius-medium,6px);padding:1rem 1.25rem;margin:0 0 1rem;min-width:0}
.notice,.alert{padding:.75rem 1rem;margin:0 0 1rem;border:1px solid;border-radius:var(--borderRadius-medium,6px)}
.notice{background:var(--bgColor-accent-muted);border-color:var(--borderColor-accent-muted)}
.alert{background:var(--bgColor-danger-muted);border-color:var(--borderColor-danger-muted)}
.ok{color:var(--fgColor-success);font-weight:600}
.bad,.error{color:var(--fgColor-danger);font-weight:600}
.error{margin:.25rem 0 0}
.hint{color:var(--fgColor-muted);margin:.25rem 0 0}
label{display:block;margin-top:.75rem}
label.inline-label{display:inline;margin:0}
.form-control,.form-select{display:block;width:100%;max-width:24rem}
textarea.form-control{max-width:none;min-height:12rem;font-family:var(--fontStack-monospace,monospace)}
input[aria-invalid="true"]{border-color:var(--borderColor-danger-emphasis)}
form .btn{margin-top:1rem}
form.inline,form.inline .btn{display:inline-block;margin-top:0}
.filters{display:flex;flex-wrap:wrap;gap:0 1rem;align-items:flex-end}
.filters .form-control,.filters .form-select{width:auto;max-width:16rem}
.actions,.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(20rem,100%),1fr));gap:1rem}
.actions h3{margin-top:0}
dl.facts{display:grid;grid-template-columns:minmax(8rem,max-content) minmax(0,1fr);gap:.25rem 1rem}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;min-width:0;overflow-wrap:break-word}
code{font-size:max(12px,.9em);overflow-wrap:break-word}
td code,th code{white-space:nowrap}
pre{background:var(--bgColor-default);border:1px solid var(--borderColor-default);border-radius:6px;padding:1rem;overflow:auto;white-space:pre-wrap;overflow-wrap:break-word}
.table-scroll{max-width:100%;overflow-x:auto}
table{width:100%;background:var(--bgColor-default);margin:0 0 1rem;border:1px solid var(--borderColor-default)}
caption{text-align:left;font-weight:600;padding:.5rem 0;caption-side:top}
th,td{padding:.4rem .5rem;text-align:left;vertical-align:top;border-bottom:1px solid var(--borderColor-muted);overflow-wrap:normal;word-break:normal;hyphens:manual}
thead th{background:var(--bgColor-muted);border-bottom-color:var(--borderColor-default)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nw{white-space:nowrap}
td .btn,th .btn{white-space:normal;text-align:left}
.cell-sub{display:block;color:var(--fgColor-muted);font-size:12px}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,[tabindex]:focus-visible{outline:3px solid var(--focus-outlineColor);outline-offset:2px}
@media (max-width:47.99rem){
.Header.console-header{padding:.5rem .75rem;gap:.4rem .75rem}
.console-header nav ul{gap:.25rem .75rem}
.sandbox-band{padding:.4rem .75rem}
main{padding:0 .75rem;margin-top:1rem}
main h1{font-size:24px}
.card{padding:.75rem}
.filters{display:block}
.filters .form-control,.filters .form-select,.form-control,.form-select{width:100%;max-width:none}
dl.facts{grid-template-columns:minmax(0,1fr)}
dl.facts dd{margin-bottom:.5rem}
table:has(td[data-label]),table:has(td[data-label]) tbody,table:has(td[data-label]) tr,table:has(td[data-label]) td,table:has(td[data-label]) tbody th{display:block;width:100%}
table:has(td[data-label]){border:0;background:none}
table:has(td[data-label]) thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table:has(td[data-label]) tr{background:var(--bgColor-default);border:1px solid var(--borderColor-default);border-radius:6px;margin:0 0 .75rem;padding:.25rem 0}
table:has(td[data-label]) td,table:has(td[data-label]) tbody th{border:0;padding:.2rem .75rem;text-align:left;white-space:normal}
table:has(td[data-label]) .nw{white-space:nowrap}
table:has(td[data-label]) [data-label]::before{content:attr(data-label) ": ";font-weight:600;color:var(--fgColor-muted)}
table:has(td[data-label]) [data-label=""]::before{content:none}
}
`;
