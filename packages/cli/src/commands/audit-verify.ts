import { InvalidArgumentError, type Command } from "commander";
import { fromBinary, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AUDIT_HEAD_TOPICS, auditHeadTopic } from "@payments/contracts";
import { AuditHeadSchema, ListAuditChainResponseSchema, type ListAuditChainResponse } from "@payments/contracts/operator";
import { chainedRowOf, ChainWalk, type ChainVerdict, type PublishedHead } from "@payments/access";
import { errorInfo, JetStreamBus, natsAddress } from "@payments/kit";
import { SERVICES, type ServiceName } from "../clients.js";
import { consoleCall } from "../console-session.js";
import type { CommandContext, Session } from "../context.js";
import { CommandFailed, UnreachableError, UsageError } from "../errors.js";
import { consoleAdminCredential } from "../operator-signer.js";

// `audit verify`: each service's audit is a hash chain (@payments/access audit-chain.ts). The
// command reads it page by page, recomputes every row's hash itself, checks that seq runs 1, 2, …
// without a gap and that each row links to the one before, holds the end to the head the
// database keeps and to the heads published before (JetStream, or given by hand), and names the
// first row missing or altered.

/** The console keeps an audit of its own, verified through its admin API. */
const CONSOLE = "console";
type Audited = ServiceName | typeof CONSOLE;
const AUDITED: readonly Audited[] = [...SERVICES, CONSOLE];

/** Rows read per page. */
const PAGE = 1000;

export interface VerifyOptions {
  service?: Audited;
  head?: PublishedHead[];
  natsUrl?: string;
}

function parseAudited(value: string): Audited {
  const name = value.trim().toLowerCase();
  if (!(AUDITED as readonly string[]).includes(name)) throw new InvalidArgumentError(`expected one of ${AUDITED.join(", ")}.`);
  return name as Audited;
}

/** `--head <seq>:<hash>`, repeatable: a head seen earlier (the "audit head" log line's seq and hash). */
function collectHead(value: string, previous: PublishedHead[] = []): PublishedHead[] {
  const match = /^(\d{1,18}):([0-9a-f]{64})$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError("expected <seq>:<hash>, the hash as 64 lower-case hex digits (the `audit head` log line's).");
  return [...previous, { seq: BigInt(match[1]!), hash: match[2]!, source: `--head ${match[1]}` }];
}

export function registerAuditVerifyCommand(audit: Command, ctx: CommandContext): void {
  audit
    .command("verify")
    .description("walk each service's audit chain, recompute every hash, and name the first row missing or altered (exit 1), or the head it verified")
    .option("--service <name>", `only this one: ${AUDITED.join("|")} (the console's own audit only when named)`, parseAudited)
    .option("--head <seq:hash>", "a head seen before (repeatable; with --service): the chain must still reach it, with that hash", collectHead)
    .option("--nats-url <url>", "read the last head each service published from JetStream (default NATS_URL; NATS_STREAM, NATS_SUBJECT_PREFIX)")
    .addHelpText(
      "after",
      `
A tail cut off the chain, with the head row set back by hand, is found against a head published
before it: each service publishes its head at least every minute (AUDIT_HEAD_INTERVAL) on the bus
and in an "audit head" log line. With --json, prints {"services":[{service, ok, rows, head, published, problem}]}.`,
    )
    .action(async (opts: VerifyOptions, cmd: Command) => {
      const session = ctx.session(cmd);
      if (opts.head && !opts.service) throw new UsageError("--head is one service's: name it with --service");
      const services: Audited[] = opts.service ? [opts.service] : [...SERVICES];
      const natsUrl = opts.natsUrl ?? (session.io.env.NATS_URL?.trim() || undefined);
      const published = natsUrl ? await publishedHeads(natsUrl, session.io.env, services) : new Map<Audited, PublishedHead[]>();
      const verdicts: Array<ChainVerdict & { service: Audited; published: PublishedHead[] }> = [];
      for (const service of services) {
        const heads = [...(published.get(service) ?? []), ...(opts.head ?? [])];
        const pages = service === CONSOLE ? consolePages(session) : servicePages(session, service);
        try {
          verdicts.push({ service, published: heads, ...(await walkChain(pages, heads)) });
        } catch (err) {
          // A process hosting only some of the services (one --grpc-url): the others are skipped unless named.
          if (!opts.service && errorInfo(err).reason === "SERVICE_NOT_HOSTED") continue;
          throw err;
        }
      }
      report(session, verdicts, natsUrl !== undefined);
      const failed = verdicts.filter((v) => v.problem);
      if (failed.length > 0) throw new CommandFailed(`the audit is not intact: ${failed.map((v) => `${v.service}: ${v.problem!.message}`).join("; ")}`);
    });
}

type Pages = (after: bigint) => Promise<ListAuditChainResponse>;

function servicePages(session: Session, service: ServiceName): Pages {
  const client = session.audit(service);
  return (after) => client.listAuditChain({ afterSeq: after, limit: PAGE });
}

/** The console's chain, through its admin API as the signed-in operator (`login`, PAYMENTS_OPERATOR_TOKEN, or this machine's key). */
function consolePages(session: Session): Pages {
  let credential: Promise<{ url: string; token: string }> | undefined;
  return async (after) => {
    credential ??= consoleAdminCredential(session.options.actor, session.io.env);
    const { url, token } = await credential;
    const { body } = await consoleCall(url, "GET", `/api/audit/chain?after=${after}&limit=${PAGE}`, { token });
    return fromJson(ListAuditChainResponseSchema, body as JsonValue);
  };
}

/** Walks the whole chain page by page; the head is the one read with the last page (same snapshot as its rows). */
async function walkChain(pages: Pages, published: readonly PublishedHead[]): Promise<ChainVerdict> {
  const walk = new ChainWalk(published);
  let after = 0n;
  let unchained = 0n;
  for (;;) {
    const page = await pages(after);
    if (after === 0n) unchained = page.unchainedRows;
    for (const row of page.rows) if (!walk.add(chainedRowOf(row))) return walk.finish(undefined);
    if (page.rows.length < PAGE) return walk.finish(page.head ? { seq: page.head.seq, hash: page.head.hash } : undefined, unchained);
    after = page.rows.at(-1)!.seq;
  }
}

/**
 * Every AuditHead the services published that the stream still holds (its retention: 14 days),
 * read once through an ordered consumer of their subjects: the chain must reach each, with its
 * hash. The highest one finds a cut tail even when its head row was set back by hand and
 * published since. NATS_STREAM and NATS_SUBJECT_PREFIX as the services run with (PAYMENTS,
 * payments by default). Each distinct head once, as first published.
 */
async function publishedHeads(url: string, env: Readonly<Record<string, string | undefined>>, services: readonly Audited[]): Promise<Map<Audited, PublishedHead[]>> {
  const stream = env.NATS_STREAM?.trim() || "PAYMENTS";
  const prefix = env.NATS_SUBJECT_PREFIX?.trim() || "payments";
  let bus: JetStreamBus;
  try {
    bus = await JetStreamBus.connect({ url, stream, subjectPrefix: prefix, timeoutMs: 5_000 });
  } catch (err) {
    throw new UnreachableError(natsAddress(url), (err as Error).message);
  }
  const subjects = new Map(services.map((service) => [`${prefix}.${auditHeadTopic(service)}`, service]));
  const heads = new Map<Audited, Map<string, PublishedHead>>();
  try {
    // One subject filter, every service's heads (servers before 2.10 take no list of filters).
    const consumer = await (await bus.manager()).jetstream().consumers.get(stream, { filter_subjects: `${prefix}.${AUDIT_HEAD_TOPICS}` });
    for (;;) {
      let pending: number | undefined;
      for await (const message of await consumer.fetch({ max_messages: 1000, expires: 1_000 })) {
        pending = message.info.pending;
        const service = subjects.get(message.subject);
        if (!service) continue;
        const head = fromBinary(AuditHeadSchema, message.data);
        const seen = heads.get(service) ?? new Map<string, PublishedHead>();
        const key = `${head.seq}:${head.hash}`;
        if (!seen.has(key)) seen.set(key, { seq: head.seq, hash: head.hash, source: `published at ${head.at ? timestampDate(head.at).toISOString() : "an unknown time"}` });
        heads.set(service, seen);
      }
      if (pending === undefined || pending === 0) break;
    }
  } finally {
    await bus.close();
  }
  return new Map([...heads].map(([service, seen]) => [service, [...seen.values()]]));
}

/** The highest of `heads` (what a cut tail is measured against). */
function highest(heads: readonly PublishedHead[]): PublishedHead | undefined {
  return heads.reduce<PublishedHead | undefined>((top, head) => (!top || head.seq > top.seq ? head : top), undefined);
}

function report(session: Session, verdicts: ReadonlyArray<ChainVerdict & { service: Audited; published: PublishedHead[] }>, fromNats: boolean): void {
  const { out } = session;
  if (out.json) {
    out.data({
      services: verdicts.map((v) => {
        const top = highest(v.published);
        return {
          service: v.service,
          ok: !v.problem,
          rows: v.rows,
          head: { seq: v.head.seq.toString(), hash: v.head.hash },
          published: { heads: v.published.length, ...(top ? { highest: { seq: top.seq.toString(), hash: top.hash, source: top.source } } : {}) },
          ...(v.problem ? { problem: { kind: v.problem.kind, seq: v.problem.seq.toString(), ...(v.problem.id ? { id: v.problem.id } : {}), message: v.problem.message } } : {}),
        };
      }),
    });
    return;
  }
  for (const v of verdicts) {
    if (v.problem) {
      out.line(`${v.service}: NOT INTACT: ${v.problem.message}`);
      continue;
    }
    const top = highest(v.published);
    const against = top ? `; reaches every head published (${v.published.length}, the highest ${top.seq}, ${top.source})` : fromNats ? "; no head published yet" : "";
    out.line(`${v.service}: verified ${v.rows} row${v.rows === 1 ? "" : "s"}, head ${v.head.seq}:${v.head.hash}${against}`);
  }
  if (!fromNats && verdicts.every((v) => v.published.length === 0)) out.line("(no published head compared: give --nats-url or --head to find a cut tail)");
}
