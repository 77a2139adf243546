/**
 * The page's whole stylesheet, inlined under the response's nonce. System fonts only: the
 * page loads nothing from anywhere, not even from this gateway. Laid out for a 360 px
 * phone first; wider screens just get a centred card.
 */
export const CHECKOUT_STYLE = `
:root{color-scheme:light;--ink:#1d2430;--muted:#5b6575;--line:#dde2ea;--bg:#f3f5f8;--card:#fff;--accent:#0b5cad;
--ok:#17703a;--ok-bg:#e6f4ea;--warn:#8a5a00;--warn-bg:#fff4d6;--bad:#a4262c;--bad-bg:#fde7e9;--info-bg:#e8f0fb}
*{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:480px;margin:0 auto;padding:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px}
.top{display:flex;align-items:center;justify-content:space-between;gap:8px;margin-bottom:8px}
h1{font-size:1.15rem;margin:0}
.lang{display:flex;gap:4px;font-size:.9rem}
.lang a{display:inline-block;min-width:40px;padding:6px 8px;border:1px solid var(--line);border-radius:6px;text-align:center;color:var(--accent);text-decoration:none}
.lang a[aria-current]{background:var(--accent);border-color:var(--accent);color:#fff}
.sandbox{margin:8px 0;padding:8px 10px;border:2px dashed var(--warn);border-radius:8px;background:var(--warn-bg);color:var(--warn);font-size:.9rem}
.badge{display:inline-block;margin-right:6px;padding:1px 6px;border-radius:4px;background:var(--warn);color:#fff;font-weight:700;font-size:.75rem;letter-spacing:.05em}
.amount-label{margin:12px 0 0;color:var(--muted);font-size:.9rem}
.amount{margin:0;font-size:2rem;font-weight:700;line-height:1.2;overflow-wrap:anywhere}
.status{margin:12px 0;padding:10px 12px;border-radius:8px;background:var(--info-bg)}
.status h2{margin:0;font-size:1.05rem}
.status p{margin:4px 0 0}
.status-completed{background:var(--ok-bg);color:var(--ok)}
.status-expired,.status-cancelled{background:var(--warn-bg);color:var(--warn)}
.status-failed,.status-invalid{background:var(--bad-bg);color:var(--bad)}
.summary{margin:8px 0 0;font-size:.95rem}
.summary .row{display:flex;flex-wrap:wrap;gap:0 8px;padding:2px 0}
.summary dt{color:var(--muted)}
.summary dt::after{content:":"}
.summary dd{margin:0;font-weight:600;overflow-wrap:anywhere;min-width:0}
.deadline{margin:0 0 12px;color:var(--muted)}
.deadline p{margin:0}
.deadline time,.deadline span{font-weight:700;color:var(--ink)}
.deadline span{font-variant-numeric:tabular-nums}
h2{font-size:1rem;margin:16px 0 8px}
dl{margin:0}
.field{padding:10px 0;border-top:1px solid var(--line)}
.field dt{color:var(--muted);font-size:.85rem}
.field dd{margin:2px 0 0;display:flex;align-items:center;justify-content:space-between;gap:8px}
.value{font-weight:600;overflow-wrap:anywhere;min-width:0}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;letter-spacing:.02em}
.note{margin:8px 0 0;padding:8px 10px;border-left:4px solid var(--warn);background:var(--warn-bg);font-size:.9rem}
button{font:inherit;cursor:pointer;border-radius:8px}
.copy{flex:none;min-height:36px;padding:6px 12px;border:1px solid var(--accent);background:#fff;color:var(--accent);font-size:.9rem}
.simulate{display:block;width:100%;min-height:48px;margin-top:8px;padding:10px;border:2px dashed var(--warn);background:var(--warn-bg);color:var(--warn);font-weight:700}
button:disabled{opacity:.6;cursor:default}
.error{color:var(--bad);font-size:.9rem}
.muted{color:var(--muted);font-size:.85rem}
.return{margin:16px 0 0}
.back{display:flex;align-items:center;justify-content:center;min-height:44px;padding:10px 12px;border:1px solid var(--accent);border-radius:8px;background:var(--accent);color:#fff;font-weight:700;text-align:center;text-decoration:none;overflow-wrap:anywhere}
.back:hover{text-decoration:underline}
a:focus-visible,button:focus-visible,[tabindex="-1"]:focus{outline:3px solid var(--accent);outline-offset:2px}
.status-failed [tabindex="-1"]:focus,.status-invalid [tabindex="-1"]:focus{outline-color:var(--bad)}
.sr-only{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);clip-path:inset(50%);white-space:nowrap;border:0}
.offscreen{position:fixed;left:-9999px;top:0;opacity:0}
@media (min-width:520px){main{padding:32px 12px}.card{padding:24px}}
`;
