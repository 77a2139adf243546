#!/usr/bin/env node
// Lighthouse 12.2.3 (run by npx, not a dependency of the workspace) with Debian's Chromium against
// every signed-in page of a running console (the all-in-one's, or any): it signs in as an operator
// and/or a merchant user through the sign-in forms, finds the areas from each side's navigation
// (plus any paths given in LIGHTHOUSE_EXTRA_PATHS), passes the session cookie to Lighthouse in
// extraHeaders, and prints the accessibility and best-practices scores of each page. Exit 1 when a
// score is below LIGHTHOUSE_MIN (95), 2 on a usage error. Not part of `pnpm test`.
//
//   CONSOLE_URL=http://127.0.0.1:8081 \
//   OPERATOR_EMAIL=admin@example.com OPERATOR_PASSWORD=… \
//   MERCHANT_EMAIL=owner@shop.example MERCHANT_PASSWORD=… \
//   node scripts/lighthouse.mjs
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);
const base = (process.env.CONSOLE_URL ?? "http://127.0.0.1:8081").replace(/\/$/, "");
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const minimum = Number(process.env.LIGHTHOUSE_MIN ?? 95);
const LIGHTHOUSE = "lighthouse@12.2.3";

/** The cookies a response set, merged into `jar`. */
function remember(jar, res) {
  for (const line of res.headers.getSetCookie()) {
    const [pair = ""] = line.split(";");
    const at = pair.indexOf("=");
    jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
}

/** A merchant dashboard path (`/merchant`, `/merchant/…`), not an operators' one such as `/merchants/…`. */
const isMerchantPath = (path) => path === "/merchant" || path.startsWith("/merchant/") || path.startsWith("/merchant?");

const cookieHeader = (jar) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");

/** Signs in through a sign-in form as a browser would; returns the cookie header of the session. */
async function signIn(path, email, password) {
  const jar = new Map();
  const page = await fetch(`${base}${path}`, { redirect: "manual" });
  remember(jar, page);
  const csrf = /name="_csrf" value="([^"]*)"/.exec(await page.text())?.[1];
  if (!csrf) throw new Error(`${path}: no CSRF field on the sign-in page`);
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: cookieHeader(jar), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  remember(jar, res);
  if (res.status !== 303) throw new Error(`${path}: sign-in of ${email} answered ${res.status}`);
  return cookieHeader(jar);
}

/** The areas a signed-in page's navigation (`nav class="areas"`) links to. */
async function areas(home, cookie) {
  const html = await (await fetch(`${base}${home}`, { headers: { cookie } })).text();
  const nav = /<nav class="areas"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "";
  return [...new Set([...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1]))];
}

async function lighthouse(url, cookie) {
  const args = [
    "--yes",
    LIGHTHOUSE,
    url,
    "--only-categories=accessibility,best-practices",
    "--output=json",
    "--quiet",
    `--chrome-path=${chromium}`,
    "--chrome-flags=--headless --no-sandbox --disable-gpu --disable-background-networking",
    `--extra-headers=${JSON.stringify({ Cookie: cookie })}`,
  ];
  const { stdout } = await run("npx", args, { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, CHROME_PATH: chromium } });
  const report = JSON.parse(stdout);
  const failing = (category) =>
    report.categories[category].auditRefs
      .map((ref) => report.audits[ref.id])
      .filter((audit) => audit.score !== null && audit.score < 1 && audit.scoreDisplayMode === "binary")
      .map((audit) => audit.id);
  return {
    accessibility: Math.round(report.categories.accessibility.score * 100),
    bestPractices: Math.round(report.categories["best-practices"].score * 100),
    failing: [...failing("accessibility"), ...failing("best-practices")],
  };
}

async function main() {
  if (!existsSync(chromium)) {
    console.error(`Chromium not found at ${chromium} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
    process.exit(2);
  }
  const sides = [];
  if (process.env.OPERATOR_EMAIL) sides.push({ signIn: "/sign-in", home: "/", email: process.env.OPERATOR_EMAIL, password: process.env.OPERATOR_PASSWORD ?? "" });
  if (process.env.MERCHANT_EMAIL) sides.push({ signIn: "/merchant/sign-in", home: "/merchant", email: process.env.MERCHANT_EMAIL, password: process.env.MERCHANT_PASSWORD ?? "" });
  if (sides.length === 0) {
    console.error("set OPERATOR_EMAIL/OPERATOR_PASSWORD and/or MERCHANT_EMAIL/MERCHANT_PASSWORD (and CONSOLE_URL)");
    process.exit(2);
  }
  const extra = (process.env.LIGHTHOUSE_EXTRA_PATHS ?? "").split(/[\s,]+/).filter(Boolean);
  let worst = 100;
  console.log(`page\taccessibility\tbest-practices\tfailing audits`);
  for (const side of sides) {
    const cookie = await signIn(side.signIn, side.email, side.password);
    const paths = [...(await areas(side.home, cookie)), ...extra.filter((p) => isMerchantPath(p) === (side.home === "/merchant"))];
    for (const path of paths) {
      for (const lang of ["tr", "en"]) {
        const url = `${base}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`;
        // A page that does not answer 200 to this session (a redirect to sign-in, a 404) is not scored: it fails.
        const status = (await fetch(url, { redirect: "manual", headers: { cookie } })).status;
        if (status !== 200) {
          worst = 0;
          console.log(`${path} [${lang}]\tanswered ${status}`);
          continue;
        }
        const score = await lighthouse(url, cookie);
        worst = Math.min(worst, score.accessibility, score.bestPractices);
        console.log(`${path} [${lang}]\t${score.accessibility}\t${score.bestPractices}\t${score.failing.join(" ") || "-"}`);
      }
    }
  }
  console.log(`lowest score: ${worst} (minimum ${minimum})`);
  process.exit(worst < minimum ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
