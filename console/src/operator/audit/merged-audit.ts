import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AuditService, type AuditRecord } from "@payments/contracts/operator";
import { auditRecordOf, listAudit } from "@payments/access";
import type { Knex } from "knex";
import type { ServiceName } from "../../service-clients.js";
import { isServiceName, refusalOf, SERVICES, type Refusal, type SignedIn } from "../operator-call.js";

/** What the audit view is narrowed to; each service applies it to its own records. */
export interface AuditFilters {
  actor: string;
  targetId: string;
  since: Date | undefined;
  until: Date | undefined;
}

/** Where one service's records continue: the cursor of the page being read, and how many of it were shown. */
interface Position {
  cursor: string;
  skip: number;
}

/** Whose audit a record comes from: one of the five services, or the console's own (operator accounts). */
export type AuditSource = ServiceName | "console";
const SOURCES: readonly AuditSource[] = [...SERVICES, "console"];
const isAuditSource = (value: string): value is AuditSource => value === "console" || isServiceName(value);

/** The merged view's cursor: a position per source that has more; a source missing from it has no more. */
export type MergedCursor = Partial<Record<AuditSource, Position>>;

const FETCH = 100;

export function encodeCursor(cursor: MergedCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

/** A cursor this page issued, or undefined (then the view starts at the newest). */
export function decodeCursor(text: string): MergedCursor | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown;
    if (!parsed || typeof parsed !== "object") return undefined;
    const out: MergedCursor = {};
    for (const [name, value] of Object.entries(parsed)) {
      const pos = value as Partial<Position> | null;
      if (!isAuditSource(name) || !pos || typeof pos.cursor !== "string" || typeof pos.skip !== "number" || !Number.isInteger(pos.skip) || pos.skip < 0 || pos.skip > FETCH) return undefined;
      out[name] = { cursor: pos.cursor, skip: pos.skip };
    }
    return out;
  } catch {
    return undefined;
  }
}

/** One service's records, read page by page as the merge needs them. */
class ServiceRecords {
  private buffer: AuditRecord[] = [];
  private next = "";
  private loaded = false;
  constructor(
    readonly service: AuditSource,
    private pageCursor: string,
    private skip: number,
    private readonly fetch: (cursor: string) => Promise<{ records: AuditRecord[]; nextCursor: string }>,
  ) {}

  /** The newest record not yet shown, reading the next page when this one is used up. */
  async head(): Promise<AuditRecord | undefined> {
    for (;;) {
      if (!this.loaded) {
        const page = await this.fetch(this.pageCursor);
        this.buffer = page.records.slice(this.skip);
        this.next = page.nextCursor;
        this.loaded = true;
      }
      if (this.buffer.length > 0) return this.buffer[0];
      if (!this.next) return undefined;
      this.pageCursor = this.next;
      this.skip = 0;
      this.loaded = false;
    }
  }

  take(): void {
    this.buffer.shift();
    this.skip += 1;
  }

  /** Where the next page continues, or undefined when this service has nothing more. */
  position(): Position | undefined {
    if (this.loaded && this.buffer.length === 0 && !this.next) return undefined;
    return { cursor: this.pageCursor, skip: this.skip };
  }
}

const atOf = (r: AuditRecord) => (r.at ? timestampDate(r.at).getTime() : 0);

export interface MergedPage {
  records: AuditRecord[];
  /** Empty when every service has shown everything. */
  nextCursor: string;
  failures: Array<{ service: AuditSource; refusal: Refusal }>;
}

/** The console's own audit (operator accounts and their four-eyes), read from its database as a service reads its own. */
async function consoleRecords(db: Knex, filters: AuditFilters, cursor: string): Promise<{ records: AuditRecord[]; nextCursor: string }> {
  const page = await listAudit(db, {
    ...(filters.actor ? { actor: filters.actor } : {}),
    ...(filters.targetId ? { targetId: filters.targetId } : {}),
    ...(filters.since ? { since: filters.since.getTime() } : {}),
    ...(filters.until ? { until: filters.until.getTime() } : {}),
    limit: FETCH,
    ...(cursor ? { cursor } : {}),
  });
  if (page === "bad-cursor") return { records: [], nextCursor: "" };
  return { records: page.rows.map(auditRecordOf), nextCursor: page.nextCursor };
}

/**
 * One page of the audit across the five services and the console (each keeps its own, paged by
 * key), newest first: a k-way merge of their pages; the cursor remembers, per source, the page
 * and how far into it this view went, so the next page continues exactly there. The console's
 * own records (operator accounts) are an admin's to read.
 */
export async function mergedAuditPage(who: SignedIn, filters: AuditFilters, cursor: MergedCursor | undefined, size: number, consoleDb?: Knex): Promise<MergedPage> {
  const failures: MergedPage["failures"] = [];
  const readable = SOURCES.filter((s) => s !== "console" || (consoleDb !== undefined && who.operator.role === "admin"));
  const sources = cursor ? readable.filter((s) => cursor[s] !== undefined) : readable;
  const streams = sources.map(
    (source) =>
      new ServiceRecords(source, cursor?.[source]?.cursor ?? "", cursor?.[source]?.skip ?? 0, (c) =>
        source === "console"
          ? consoleRecords(consoleDb!, filters, c)
          : who.client(AuditService, source).listAuditRecords({
              actor: filters.actor,
              targetId: filters.targetId,
              ...(filters.since ? { since: timestampFromDate(filters.since) } : {}),
              ...(filters.until ? { until: timestampFromDate(filters.until) } : {}),
              limit: FETCH,
              cursor: c,
            }),
      ),
  );
  const live: ServiceRecords[] = [];
  for (const stream of streams) {
    try {
      await stream.head();
      live.push(stream);
    } catch (err) {
      failures.push({ service: stream.service, refusal: refusalOf(err, who.t) });
    }
  }
  const records: AuditRecord[] = [];
  while (records.length < size) {
    let best: { stream: ServiceRecords; record: AuditRecord } | undefined;
    for (const stream of live) {
      const record = await stream.head();
      if (record && (!best || atOf(record) > atOf(best.record) || (atOf(record) === atOf(best.record) && record.id > best.record.id))) best = { stream, record };
    }
    if (!best) break;
    records.push(best.record);
    best.stream.take();
  }
  for (const stream of live) await stream.head();
  const next: MergedCursor = {};
  for (const stream of live) {
    const position = stream.position();
    if (position) next[stream.service] = position;
  }
  return { records, nextCursor: Object.keys(next).length > 0 ? encodeCursor(next) : "", failures };
}
