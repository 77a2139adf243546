import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { ConnectError, Code } from "@connectrpc/connect";
import { startJob, type Job } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { importStatement } from "./statement-import.js";

/**
 * BANK_FEED_DIR: statement files dropped into a directory (an SFTP drop of the bank's MT940
 * files, a mounted share) are imported by a job, each once, whichever replica gets it.
 *
 *   <dir>/name.sta                  dropped by the bank (write it as .name and rename it in;
 *                                   dotfiles and files changed in the last SETTLE_MS are left)
 *   <dir>/processing/<ts>-name.sta  claimed by one replica: the atomic rename is the lock, the
 *                                   replica whose rename fails skips the file
 *   <dir>/imported/<ts>-name.sta    imported (its transfers recorded, or duplicates)
 *   <dir>/failed/<ts>-name.sta      refused as malformed, with <ts>-name.sta.error.txt saying why
 *
 * A file whose import broke for another reason (the database away) goes back to <dir> and is
 * tried on the next pass. A replica killed mid-import leaves its file in processing/: moving it
 * back to <dir> is safe, since transfers are recorded once per (iban, bank transaction id).
 * The subdirectories must be on the same filesystem as <dir> (rename is atomic only there).
 */

/** Extension → statement format (importStatement); other files are left where they are. */
export const STATEMENT_EXTENSIONS: Readonly<Record<string, string>> = { ".sta": "mt940", ".mt940": "mt940", ".940": "mt940", ".txt": "mt940" };
/** A file changed more recently than this may still be being written: left for the next pass. */
export const SETTLE_MS = 2000;

export interface DirScanState {
  /** Names already logged as not a statement, so each is logged once per process. */
  ignored: Set<string>;
}

export interface DirScanCounts {
  files: number;
  failedFiles: number;
  /** Files another replica claimed first. */
  lost: number;
  /** Files whose import broke for a reason other than the file (put back for the next pass). */
  retried: number;
  imported: number;
  matched: number;
  unmatched: number;
  review: number;
  duplicates: number;
}

/** A sortable, filesystem-safe UTC time: 20261122T100000123Z. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, "");
}

/** Renames `from` to `<dir>/<name>`, or `<name>-2`, … when that is taken (never overwrites). */
async function moveUnique(from: string, dir: string, name: string): Promise<string> {
  for (let n = 1; ; n++) {
    const target = join(dir, n === 1 ? name : `${name}-${n}`);
    const taken = await stat(target).then(
      () => true,
      () => false,
    );
    if (taken) continue;
    await rename(from, target);
    return target;
  }
}

/** A refusal of the file itself (malformed, empty), as opposed to a fault of ours. */
function isRefusal(err: unknown): err is ConnectError {
  return err instanceof ConnectError && err.code === Code.InvalidArgument;
}

/** One pass over the directory: claims, imports and files away every new statement file. */
export async function scanBankFeedDir(ctx: DepositContext, dir: string, state: DirScanState = { ignored: new Set() }, settleMs = SETTLE_MS): Promise<DirScanCounts> {
  const processing = join(dir, "processing");
  const imported = join(dir, "imported");
  const failed = join(dir, "failed");
  await Promise.all([processing, imported, failed].map((d) => mkdir(d, { recursive: true })));
  const counts: DirScanCounts = { files: 0, failedFiles: 0, lost: 0, retried: 0, imported: 0, matched: 0, unmatched: 0, review: 0, duplicates: 0 };

  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const name = entry.name;
    if (!entry.isFile() || name.startsWith(".")) continue;
    const format = STATEMENT_EXTENSIONS[extname(name).toLowerCase()];
    if (!format) {
      if (!state.ignored.has(name)) {
        state.ignored.add(name);
        ctx.logger.warn({ dir, file: name, extensions: Object.keys(STATEMENT_EXTENSIONS) }, "bank feed directory: not a statement file, left alone");
      }
      continue;
    }
    const source = join(dir, name);
    const info = await stat(source).catch(() => undefined);
    if (!info || Date.now() - info.mtimeMs < settleMs) continue;

    const when = stamp(ctx.clock.now());
    const claimed = join(processing, `${when}-${process.pid}-${Math.random().toString(36).slice(2, 8)}-${name}`);
    try {
      await rename(source, claimed);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        counts.lost++;
        continue;
      }
      throw err;
    }

    try {
      const result = await importStatement(ctx, format, await readFile(claimed), name);
      await moveUnique(claimed, imported, `${when}-${name}`);
      counts.files++;
      counts.imported += result.imported;
      counts.matched += result.matched;
      counts.unmatched += result.unmatched;
      counts.review += result.review;
      counts.duplicates += result.duplicates;
    } catch (err) {
      if (isRefusal(err)) {
        const target = await moveUnique(claimed, failed, `${when}-${name}`);
        await writeFile(`${target}.error.txt`, `${err.rawMessage}\n`);
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
  if (counts.files + counts.failedFiles + counts.retried > 0) ctx.logger.info({ dir, ...counts }, "bank feed directory scanned");
  return counts;
}

/** The BANK_FEED_DIR job (every BANK_FEED_INTERVAL); undefined when BANK_FEED_DIR is unset. */
export function startBankFeedDirJob(ctx: DepositContext): Job | undefined {
  const dir = ctx.config.BANK_FEED_DIR;
  if (!dir) return undefined;
  const state: DirScanState = { ignored: new Set() };
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
