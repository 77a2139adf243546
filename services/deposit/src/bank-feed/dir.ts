import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { ConnectError, Code } from "@connectrpc/connect";
import { startJob, type Job } from "@payments/kit";
import type { DepositContext } from "../context.js";
import { importStatement, STATEMENT_FORMATS } from "../statement-import.js";
import { camtFormatOf, type Completeness } from "./index.js";

/**
 * BANK_FEED_DIR: statement files dropped into a directory (an SFTP drop of the bank's files, a
 * mounted share) are imported by a job, each once, whichever replica gets it.
 *
 * What a sender must do: write each file under a temporary name, then rename it, within the
 * same directory, to its final name once it is completely written and closed. A temporary name
 * starts with "." or ends in .tmp, .part, .partial, .filepart, .crdownload, .swp, .uploading,
 * .writing or ~ (any case); most SFTP clients and `rsync` do this already. The final name ends
 * in .sta, .mt940, .940 or .txt (MT940) or .xml (ISO 20022 camt.053 statement or camt.054
 * notification, told apart by the document's namespace), and is not reused while the directory
 * still holds a file of that name.
 *
 * What the directory does, on every pass (BANK_FEED_INTERVAL) of every replica:
 *
 *   <dir>/.name.sta, <dir>/name.sta.part   a temporary name: left alone, without a word
 *   <dir>/notes.pdf                 not a statement extension: left alone, logged once
 *   <dir>/name.sta                  changed in the last SETTLE_MS, or not complete (MT940: its last
 *                                   statement is not closed; camt: the document's closing tag is
 *                                   missing): left for a later pass, logged once per name and size.
 *                                   These catch a sender that writes in place; they are no
 *                                   substitute for the rename (a pause at the end of a statement
 *                                   looks complete)
 *   <dir>/processing/<time>-<pid>-<random>-name.sta
 *                                   claimed by one replica: the atomic rename is the lock, the
 *                                   replica whose rename fails skips the file
 *   <dir>/imported/<time>-name.sta  imported (its transfers recorded, or duplicates)
 *   <dir>/failed/<time>-name.sta    refused (malformed, or not of our accounts), with
 *                                   <time>-name.sta.error.txt saying why
 *
 * A file whose import broke for another reason (the database away) goes back to <dir> and is
 * tried on the next pass. A replica killed mid-import leaves its file in processing/: once the
 * claim's time (from its name: a rename keeps the file's own time) is BANK_FEED_CLAIM_TIMEOUT
 * old, a pass takes it back to <dir>/name.sta (name-2.sta, … if that is taken) and imports it
 * again, which is harmless: a transfer is recorded once per (account, bank transaction id).
 * Replicas racing to take one back are decided by the rename. A file in processing/ whose name
 * is not a claim's is left alone, logged once. Never put files into processing/ by hand.
 * The subdirectories must be on the same filesystem as <dir> (rename is atomic only there).
 */

/** Extension → statement format (importStatement); `.xml` is camt053 or camt054 by its namespace (formatOf). Other files are left where they are. */
export const STATEMENT_EXTENSIONS: Readonly<Record<string, string>> = { ".sta": "mt940", ".mt940": "mt940", ".940": "mt940", ".txt": "mt940", ".xml": "camt053" };
/** Names a sender is still writing (see the module comment), compared in lower case; a name starting with "." is one too. */
export const TEMPORARY_SUFFIXES: readonly string[] = [".tmp", ".part", ".partial", ".filepart", ".crdownload", ".swp", ".uploading", ".writing", "~"];
/** A file changed more recently than this may still be being written: left for the next pass. */
export const SETTLE_MS = 2000;

export interface DirScanState {
  /** Names already logged as not a statement, so each is logged once per process. */
  ignored: Set<string>;
  /** Files not complete yet → the size at which that was logged, so each (name, size) is logged once. */
  waiting: Map<string, number>;
  /** Names in processing/ that are not claims, already logged. */
  unreadableClaims: Set<string>;
}

export function newDirScanState(): DirScanState {
  return { ignored: new Set(), waiting: new Map(), unreadableClaims: new Set() };
}

export interface DirScanCounts {
  files: number;
  failedFiles: number;
  /** Files another replica claimed first. */
  lost: number;
  /** Files whose import broke for a reason other than the file (put back for the next pass). */
  retried: number;
  /** Files left for a later pass because they are not complete yet. */
  waiting: number;
  /** Abandoned claims taken back from processing/ (and imported in the same pass, unless another replica got them). */
  reclaimed: number;
  imported: number;
  matched: number;
  unmatched: number;
  review: number;
  duplicates: number;
}

/** Whether a name is one a sender writes under before renaming the file in (see TEMPORARY_SUFFIXES). */
export function isTemporaryName(name: string): boolean {
  const lower = name.toLowerCase();
  return name.startsWith(".") || TEMPORARY_SUFFIXES.some((suffix) => lower.endsWith(suffix));
}

/** A sortable, filesystem-safe UTC time: 20261122T100000123Z. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, "");
}

/** The name a claim gives a file in processing/: `<stamp>-<pid>-<random>-<name>`; the stamp is when it was claimed. */
function claimName(when: string, name: string): string {
  return `${when}-${process.pid}-${randomBytes(4).toString("hex")}-${name}`;
}

// The random part is [0-9a-z]*: earlier versions used Math.random() in base 36.
const CLAIM_NAME = /^(\d{8}T\d{9}Z)-(\d+)-([0-9a-z]*)-(.+)$/;

/** When a file in processing/ was claimed, and its name before; undefined when the name is not a claim's. */
export function parseClaimName(claimed: string): { claimedAt: Date; name: string } | undefined {
  const match = CLAIM_NAME.exec(claimed);
  if (!match) return undefined;
  const s = match[1]!;
  const claimedAt = new Date(`${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}.${s.slice(15, 18)}Z`);
  // Date normalises 20261131 to December 1st: only a stamp that reads back the same is one.
  if (Number.isNaN(claimedAt.getTime()) || stamp(claimedAt) !== s) return undefined;
  return { claimedAt, name: match[4]! };
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/**
 * Renames `from` to `<dir>/<name>`, or `<stem>-2<ext>`, … when that is taken (never overwrites;
 * the extension stays last, so a file put back into the drop directory is still a statement).
 */
async function moveUnique(from: string, dir: string, name: string): Promise<string> {
  const extension = extname(name);
  const stem = name.slice(0, name.length - extension.length);
  for (let n = 1; ; n++) {
    const target = join(dir, n === 1 ? name : `${stem}-${n}${extension}`);
    const taken = await stat(target).then(
      () => true,
      () => false,
    );
    if (taken) continue;
    await rename(from, target);
    return target;
  }
}

/** A refusal of the file itself (malformed, empty, not our account), as opposed to a fault of ours. */
function isRefusal(err: unknown): err is ConnectError {
  return err instanceof ConnectError && err.code === Code.InvalidArgument;
}

/** The format of a file: by its extension, and for `.xml` by the document's root namespace (an unknown one stays camt053, which refuses it saying why). */
function formatOf(byExtension: string, content: Uint8Array): string {
  return byExtension === "camt053" ? (camtFormatOf(content) ?? "camt053") : byExtension;
}

/** Whether the format says the file is written to its end; a format that cannot tell takes it as complete (the settle time still applies). */
function completenessOf(format: string, content: Uint8Array): Completeness {
  return STATEMENT_FORMATS[format]?.completeness?.(content) ?? { complete: true };
}

/**
 * Claims in processing/ older than BANK_FEED_CLAIM_TIMEOUT were left by a replica that stopped
 * mid-import: back to the drop directory, for this pass to import.
 */
async function takeBackAbandonedClaims(ctx: DepositContext, dir: string, processing: string, state: DirScanState, counts: DirScanCounts): Promise<void> {
  const now = ctx.clock.now().getTime();
  const present = new Set<string>();
  for (const entry of await readdir(processing, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const claim = parseClaimName(entry.name);
    if (!claim) {
      present.add(entry.name);
      if (!state.unreadableClaims.has(entry.name)) {
        state.unreadableClaims.add(entry.name);
        ctx.logger.warn({ dir, file: entry.name }, "bank feed directory: a file in processing/ is not named as a claim (<time>-<pid>-<random>-<name>); left alone");
      }
      continue;
    }
    if (now - claim.claimedAt.getTime() < ctx.config.BANK_FEED_CLAIM_TIMEOUT) continue;
    try {
      const target = await moveUnique(join(processing, entry.name), dir, claim.name);
      counts.reclaimed++;
      ctx.logger.warn(
        { dir, file: claim.name, claim: entry.name, claimedAt: claim.claimedAt.toISOString(), movedTo: target },
        "bank feed directory: a claim older than BANK_FEED_CLAIM_TIMEOUT was taken back (its replica stopped mid-import); the file is imported again",
      );
    } catch (err) {
      // Another replica took it back first (or its own replica finished it after all): the rename decided.
      if (isNotFound(err)) continue;
      throw err;
    }
  }
  for (const name of state.unreadableClaims) if (!present.has(name)) state.unreadableClaims.delete(name);
}

/** One pass over the directory: takes back abandoned claims, then claims, imports and files away every complete statement file. */
export async function scanBankFeedDir(ctx: DepositContext, dir: string, state: DirScanState = newDirScanState(), settleMs = SETTLE_MS): Promise<DirScanCounts> {
  const processing = join(dir, "processing");
  const imported = join(dir, "imported");
  const failed = join(dir, "failed");
  await Promise.all([processing, imported, failed].map((d) => mkdir(d, { recursive: true })));
  const counts: DirScanCounts = { files: 0, failedFiles: 0, lost: 0, retried: 0, waiting: 0, reclaimed: 0, imported: 0, matched: 0, unmatched: 0, review: 0, duplicates: 0 };

  await takeBackAbandonedClaims(ctx, dir, processing, state, counts);

  const present = new Set<string>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const name = entry.name;
    // A temporary name is the sender's promise that the file is not ready: not even logged.
    if (!entry.isFile() || isTemporaryName(name)) continue;
    present.add(name);
    const byExtension = STATEMENT_EXTENSIONS[extname(name).toLowerCase()];
    if (!byExtension) {
      if (!state.ignored.has(name)) {
        state.ignored.add(name);
        ctx.logger.warn({ dir, file: name, extensions: Object.keys(STATEMENT_EXTENSIONS) }, "bank feed directory: not a statement file, left alone");
      }
      continue;
    }
    const source = join(dir, name);
    const info = await stat(source).catch(() => undefined);
    if (!info || Date.now() - info.mtimeMs < settleMs) continue;
    // Read in place, before the claim: a file claimed while still being written would have its
    // rest written to a new file of the same name, imported (or refused) on its own.
    const content = await readFile(source).catch(() => undefined);
    if (!content) continue;
    const completeness = completenessOf(formatOf(byExtension, content), content);
    if (!completeness.complete) {
      counts.waiting++;
      if (state.waiting.get(name) !== content.length) {
        state.waiting.set(name, content.length);
        ctx.logger.warn({ dir, file: name, bytes: content.length, reason: completeness.reason }, "bank feed directory: file not complete yet; left for a later pass");
      }
      continue;
    }
    state.waiting.delete(name);

    const when = stamp(ctx.clock.now());
    const claimed = join(processing, claimName(when, name));
    try {
      await rename(source, claimed);
    } catch (err) {
      if (isNotFound(err)) {
        counts.lost++;
        continue;
      }
      throw err;
    }

    try {
      const claimedContent = await readFile(claimed);
      // Rewritten between the read above and the claim: what was claimed is judged afresh.
      const format = formatOf(byExtension, claimedContent);
      const again = completenessOf(format, claimedContent);
      if (!again.complete) {
        await moveUnique(claimed, dir, name);
        counts.waiting++;
        continue;
      }
      // The watched directory is the reporter (no caller: a job of this service read the file).
      const result = await importStatement(ctx, format, claimedContent, name, `bank feed directory ${dir}`);
      await fileAway(ctx, claimed, imported, `${when}-${name}`, dir);
      counts.files++;
      counts.imported += result.imported;
      counts.matched += result.matched;
      counts.unmatched += result.unmatched;
      counts.review += result.review;
      counts.duplicates += result.duplicates;
    } catch (err) {
      if (isRefusal(err)) {
        const target = await fileAway(ctx, claimed, failed, `${when}-${name}`, dir);
        if (target) await writeFile(`${target}.error.txt`, `${err.rawMessage}\n`);
        counts.failedFiles++;
        ctx.logger.warn({ dir, file: name, failedAs: target, reason: err.rawMessage }, "bank feed directory: statement refused");
        continue;
      }
      // Not the file's fault: back where it was, for the next pass (or another replica).
      await moveUnique(claimed, dir, name).catch(() => undefined);
      counts.retried++;
      ctx.logger.warn({ dir, file: name, err }, "bank feed directory: import failed; the file is retried on the next pass");
    }
  }
  for (const name of state.ignored) if (!present.has(name)) state.ignored.delete(name);
  for (const name of state.waiting.keys()) if (!present.has(name)) state.waiting.delete(name);
  if (counts.files + counts.failedFiles + counts.retried + counts.reclaimed > 0) ctx.logger.info({ dir, ...counts }, "bank feed directory scanned");
  return counts;
}

/**
 * Moves a claimed file to imported/ or failed/. Gone from processing/ means another replica took
 * the claim back (this import outlasted BANK_FEED_CLAIM_TIMEOUT) and imports it again: harmless,
 * said in the log, and undefined returned.
 */
async function fileAway(ctx: DepositContext, claimed: string, to: string, name: string, dir: string): Promise<string | undefined> {
  try {
    return await moveUnique(claimed, to, name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    ctx.logger.warn({ dir, claim: claimed }, "bank feed directory: the claim was taken back while the file was imported (the import took longer than BANK_FEED_CLAIM_TIMEOUT); it is imported again, its transfers recorded once");
    return undefined;
  }
}

/** The BANK_FEED_DIR job (every BANK_FEED_INTERVAL); undefined when BANK_FEED_DIR is unset. */
export function startBankFeedDirJob(ctx: DepositContext): Job | undefined {
  const dir = ctx.config.BANK_FEED_DIR;
  if (!dir) return undefined;
  const state = newDirScanState();
  return startJob({
    name: "bank-feed-dir",
    intervalMs: ctx.config.BANK_FEED_INTERVAL,
    runAtStart: true,
    backoff: { initialMs: 1000, maxMs: 60_000 },
    logger: ctx.logger,
    metrics: ctx.metrics,
    async run() {
      const counts = await scanBankFeedDir(ctx, dir, state);
      if (counts.retried > 0) return { failed: { err: new Error(`${counts.retried} file(s) could not be imported`), fields: { dir }, message: "bank feed directory: some files could not be imported; retrying" } };
      return counts.files + counts.failedFiles === 0 ? { idle: true } : undefined;
    },
  });
}
