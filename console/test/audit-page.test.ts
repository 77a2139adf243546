import test from "ava";
import { parse } from "csv-parse/sync";
import { AuditService, type AuditRecord } from "@payments/contracts/operator";
import { createServiceClient } from "@payments/testing";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";
import type { Browser } from "./harness.js";

let stack: Stack;
let viewer: Browser;
let transferId = "";
stackForTests(test, async (s) => {
  stack = s;
  // Records in two services: each merchant made (merchant service), each deposit and transfer (deposit service).
  for (let i = 0; i < 25; i++) await merchantDeposit(stack, { sandbox: true });
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const short = await reportTo(stack, deposit, 40_000n, `odeme ${deposit.reference}`);
  transferId = short.id;
  const operator = await signedInAs(stack.c, "ops-audit@example.com", "operator");
  await postFrom(operator, `/transfers/${short.id}`, `/transfers/${short.id}/resolve`, { decision: "complete", reason: "fee accepted" });
  // Refused by the service, and audited as refused.
  await postFrom(operator, `/transfers/${short.id}`, `/transfers/${short.id}/resolve`, { decision: "return", reason: "try", iban: "", recipientName: "" });
  viewer = await signedInAs(stack.c, "viewer-audit@example.com", "viewer");
});

async function everyRecord(service: string): Promise<AuditRecord[]> {
  const client = createServiceClient(AuditService, stack.services.server.url, { service });
  const out: AuditRecord[] = [];
  let cursor = "";
  do {
    const page = await client.listAuditRecords({ limit: 500, cursor });
    out.push(...page.records);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const ids = (html: string) => [...html.matchAll(/<time datetime="([^"]+)">/g)].map((m) => m[1]!);

test("a viewer pages through every service's records newest first, each once, to the end", async (t) => {
  const expected = (await Promise.all(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"].map(everyRecord))).flat();
  t.true(expected.length > 60, "more than one page");
  let path: string | undefined = "/audit?lang=en";
  const times: string[] = [];
  let pages = 0;
  while (path) {
    const page = await viewer.get(path);
    t.is(page.status, 200);
    if (pages === 0) t.true(page.html.includes("<caption>What operators did, across the services, newest first</caption>"));
    times.push(...ids(page.html));
    const next = /<a rel="next" href="([^"]+)"/.exec(page.html)?.[1];
    path = next?.replace(/&amp;/g, "&");
    pages++;
  }
  t.true(pages >= 2);
  t.is(times.length, expected.length);
  t.deepEqual(times, [...times].sort().reverse(), "newest first across services");
});

test("searching by actor and target narrows the view; the CSV has the same records", async (t) => {
  const byActor = await viewer.get("/audit?lang=en&actor=ops-audit%40example.com");
  t.is(byActor.status, 200);
  t.is(ids(byActor.html).length, 2, "the completion and the refused return");
  t.true(byActor.html.includes("Not allowed for this role"), "the refused return's outcome, in words");
  t.false(byActor.html.includes("PERMISSION_DENIED"), "never the code itself");
  const byTarget = await viewer.get(`/audit?lang=tr&target=${transferId}`);
  t.true(byTarget.html.includes("Havale sonuçlandırıldı"), "the operation in Turkish");
  t.false(byTarget.html.includes("ResolveTransfer"));
  const csv = await viewer.get("/audit.csv?actor=ops-audit%40example.com");
  t.is(csv.status, 200);
  t.regex(csv.headers.get("content-type") ?? "", /^text\/csv/);
  const rows = parse<Record<string, string>>(csv.html, { columns: true });
  t.is(rows.length, 2);
  t.deepEqual(rows.map((r) => r.outcome).sort(), ["PERMISSION_DENIED", "ok"]);
  t.true(rows.every((r) => r.actor === "ops-audit@example.com" && r.service === "deposit"));
  const future = await viewer.get("/audit?lang=en&since=2099-01-01T00:00");
  t.true(future.html.includes("No record matches."));
  t.is((await viewer.get("/audit?since=yesterday")).status, 400);
});

test("names first: the operator who acted by name with the email beside, a merchant the record names by name with its id beside", async (t) => {
  const byActor = await viewer.get("/audit?lang=en&actor=ops-audit%40example.com");
  t.regex(byActor.html, /ops-audit(<\/span>)? <small><code class="id">ops-audit@example.com<\/code><\/small>/, "a word kept whole may sit in its own span");
  const { merchants } = await stack.merchants.listMerchants({ pageSize: 1 });
  const merchant = merchants[0]!;
  const byTarget = await viewer.get(`/audit?lang=en&target=${merchant.id}`);
  t.true(byTarget.html.includes(`<a href="/merchants/${merchant.id}">${merchant.name}</a> <small><code class="id">${merchant.id}</code></small>`));
});

test("an admin sees the console's own records (operator accounts and their four-eyes) merged with the services'; a viewer does not", async (t) => {
  const admin = await signedInAs(stack.c, "admin-audit@example.com", "admin");
  const page = await admin.get("/audit?lang=en&target=admin-audit%40example.com");
  t.is(page.status, 200);
  t.true(page.html.includes("Operator account created"), "the account's creation by the console's admin API");
  const asViewer = await viewer.get("/audit?lang=en&target=admin-audit%40example.com");
  t.false(asViewer.html.includes("Operator account created"));
});
