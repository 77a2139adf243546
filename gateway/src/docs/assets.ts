import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants as zlib, gzip } from "node:zlib";

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** A static file of the docs page, ready to serve: its bytes, compressed forms and strong ETag. */
export interface DocsAsset {
  /** The URL file name, with a content hash in it, e.g. `scalar.3f2a…e1.js`. */
  file: string;
  type: string;
  etag: string;
  raw: Buffer;
  br: Buffer;
  gzip: Buffer;
}

/** The first 16 hex digits of the SHA-256 of `bytes`: enough to tell versions apart. */
export function contentHash(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 16);
}

/** Brotli (a middle quality: the bundle is 4 MB and compressed once per process) and gzip of a file, with its hash in its name. */
export async function prepareAsset(name: string, ext: string, type: string, bytes: Buffer): Promise<DocsAsset> {
  const hash = contentHash(bytes);
  const [br, gzipped] = await Promise.all([
    brotli(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 6, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
    gz(bytes, { level: 6 }),
  ]);
  return { file: `${name}.${hash}.${ext}`, type, etag: `"${hash}"`, raw: bytes, br, gzip: gzipped };
}

/**
 * The path of Scalar's standalone browser bundle in the installed @scalar/api-reference.
 * The package exports only its ESM entry (dist/index.js), so the bundle is found next to it.
 */
export function scalarBundlePath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@scalar/api-reference")), "browser", "standalone.js");
}

let scalarBundle: Promise<DocsAsset> | undefined;

/**
 * The Scalar bundle, read and compressed once per process, on first use (so a gateway that
 * never serves /docs never pays for it). The trailing source-map comment is dropped: the map
 * (17 MB) is not served.
 */
export function loadScalarBundle(): Promise<DocsAsset> {
  scalarBundle ??= (async () => {
    const text = await readFile(scalarBundlePath(), "utf8");
    const bytes = Buffer.from(text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"));
    return prepareAsset("scalar", "js", "application/javascript; charset=utf-8", bytes);
  })();
  // A failed read is not remembered: the next request tries again.
  scalarBundle.catch(() => {
    scalarBundle = undefined;
  });
  return scalarBundle;
}
