import { readFileSync } from "node:fs";
import test from "ava";
import type { Command } from "commander";
import { WITHDRAWAL_FAILURE_CODES } from "@payments/records";
import { buildProgram } from "../src/program.js";

/*
 * The root README's "Try it" tells a newcomer what the CLI really does on the all-in-one (the
 * walk itself runs for real in test/all-in-one.e2e.test.ts and test/sandbox-helpers.e2e.test.ts):
 * a live merchant and a live account wait for a second operator, and it says which command that
 * operator runs; every `pnpm cli` command it shows exists; a withdrawal fails with a reason code,
 * the codes the CLI names; a sandbox payment of another amount follows the paid-amount rules.
 */

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
const tryIt = readme.slice(readme.indexOf("## Try it"), readme.indexOf("## Operators' day"));

/** The lines of the shell blocks of a text. */
const shellLines = (text: string) => [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) => block[1]!.split("\n"));

test("Try it's live merchant and live account each wait for a second operator, and the README names the command that approves", (t) => {
  const lines = shellLines(tryIt);
  const after = (pattern: RegExp) => lines.slice(lines.findIndex((line) => pattern.test(line)) + 1);
  const create = after(/^pnpm cli merchant create --name "My Live Shop"/);
  t.regex(create[0] ?? "", /^# error: APPROVAL_REQUIRED: .*approval apr_/);
  t.regex(create[1] ?? "", /^PAYMENTS_OPERATOR=\w+ pnpm cli approval approve apr_… --json/);
  t.regex(create[2] ?? "", /"merchant":\{"merchantId":"mer_…","apiKey":"pk_…","apiSecret":"sk_…","webhookSecret":"whsec_…"\}/);
  t.regex(create[3] ?? "", /^export PAYMENTS_API_KEY=pk_… PAYMENTS_API_SECRET=sk_…/);
  const account = after(/^pnpm cli account add .* --fast$/);
  t.regex(account[0] ?? "", /^# error: APPROVAL_REQUIRED: .*approval apr_… \(add live receiving account/);
  t.regex(account[1] ?? "", /^PAYMENTS_OPERATOR=\w+ pnpm cli approval approve apr_…/);
  t.regex(tryIt, /the CLI signs with the local admin key as whoever `PAYMENTS_OPERATOR`\s+names/);
});

/** The command a `pnpm cli …` line runs, found word by word among the program's commands, or where it stopped. */
function commandOf(line: string): { found: string[]; missing?: string } {
  const words = line.replace(/^.*?pnpm cli /, "").split(/\s+/);
  let command: Command = buildProgram({ stdout: { write: () => true }, stderr: { write: () => true }, env: {} });
  const found: string[] = [];
  for (const word of words) {
    if (word.startsWith("-") || command.commands.length === 0) break;
    const next = command.commands.find((c) => c.name() === word);
    if (!next) return { found, missing: word };
    found.push(word);
    command = next;
  }
  return { found };
}

test("every `pnpm cli` command Try it shows is one the CLI has", (t) => {
  const commands = [...shellLines(tryIt), ...tryIt.split("\n")].flatMap((line) => [...line.matchAll(/pnpm cli ([a-z-]+(?: [a-z-]+)*)/g)].map((m) => `pnpm cli ${m[1]!}`));
  t.true(commands.length >= 15, `only ${commands.length} found`);
  for (const line of new Set(commands)) {
    const { found, missing } = commandOf(line);
    t.is(missing, undefined, `${line}: no command "${missing ?? ""}" after "${found.join(" ")}"`);
    t.true(found.length > 0, line);
  }
});

test("Try it fails a withdrawal with --reason <code>, naming the codes the CLI takes", (t) => {
  t.regex(tryIt, /`pnpm cli withdrawal fail <id> --reason <code>`/);
  t.notRegex(tryIt, /--reason <text>/);
  const named = /`failureReason` \(and its `withdrawal\.failed` callback\) carries: ((?:`[A-Z_]+`,\s*)+)or the bank's own code/.exec(tryIt)?.[1];
  t.deepEqual([...(named ?? "").matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]), Object.keys(WITHDRAWAL_FAILURE_CODES));
});

test("Try it says a sandbox payment of another amount follows the paid-amount rules: less waits in review, more completes", (t) => {
  const pay = tryIt.slice(tryIt.indexOf("`POST /v1/sandbox/deposit/{transactionId}/pay`"), tryIt.indexOf("`POST /v1/sandbox/deposit/{transactionId}/expire`"));
  t.notRegex(pay, /Another amount completes the deposit/);
  t.regex(pay, /less \(`underpayment`\s+`review`\) leaves the deposit `pending`/);
  t.regex(pay, /more \(`overpayment` `complete`\) completes it with the amount received/);
});

test("the README quotes the ready line with the address that answers, the API reference", (t) => {
  t.regex(readme, /prints a line `ready: gateway listening on 0\.0\.0\.0:8080 \(open\s+http:\/\/localhost:8080\/docs in your browser: the API reference\)/);
});
