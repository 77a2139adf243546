import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { ConfigError, loadConfig, type Env } from "./config.js";

/** TLS of the internal API a service serves. PEM contents, read once at startup. */
export interface ServerTlsOptions {
  cert: Buffer;
  key: Buffer;
  /** When set, every connection must present a client certificate signed by this CA (mTLS). */
  clientCa?: Buffer;
}

/** TLS of calls to other services (used for `https://` service URLs). PEM contents. */
export interface ClientTlsOptions {
  /** Trusted instead of the public roots for service certificates. */
  ca?: Buffer;
  /** Client certificate and key, presented to services that require mTLS. */
  cert?: Buffer;
  key?: Buffer;
}

/** Server side: file paths of PEM files. */
export const internalServerTlsSchema = z.object({
  GRPC_TLS_CERT: z.string().optional(),
  GRPC_TLS_KEY: z.string().optional(),
  GRPC_TLS_CLIENT_CA: z.string().optional(),
});

/** Client side (services, gateway, CLI): file paths of PEM files. */
export const internalClientTlsSchema = z.object({
  INTERNAL_TLS_CA: z.string().optional(),
  INTERNAL_TLS_CERT: z.string().optional(),
  INTERNAL_TLS_KEY: z.string().optional(),
});

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Collects every problem of a group of settings, so one start reports all of them. */
class Problems {
  readonly lines: string[] = [];
  add(variable: string, message: string): void {
    this.lines.push(`${variable}: ${message}`);
  }
  throwIfAny(): void {
    if (this.lines.length > 0) throw new ConfigError(`invalid configuration:\n  ${this.lines.join("\n  ")}`);
  }
}

function readPemFile(variable: string, path: string, problems: Problems): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (err) {
    problems.add(variable, `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
}

/** Every certificate of a PEM file (a chain or a CA bundle), or a problem when there is none or one is broken. */
function certificates(variable: string, path: string, pem: Buffer, problems: Problems): X509Certificate[] | undefined {
  const blocks = pem.toString("latin1").match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    problems.add(variable, `${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    return undefined;
  }
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch (err) {
    problems.add(variable, `${path} holds a certificate that cannot be parsed (${(err as Error).message})`);
    return undefined;
  }
}

function privateKey(variable: string, path: string, pem: Buffer, problems: Problems): KeyObject | undefined {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    problems.add(variable, `${path} holds no usable unencrypted PEM private key (${(err as Error).message})`);
    return undefined;
  }
}

/**
 * A certificate file and its key: both or neither, readable, the key matching the first
 * (leaf) certificate, the leaf valid now. Returns the PEM contents.
 */
function certificateAndKey(
  names: { cert: string; key: string },
  paths: { cert?: string | undefined; key?: string | undefined },
  problems: Problems,
): { cert: Buffer; key: Buffer } | undefined {
  if (!paths.cert && !paths.key) return undefined;
  if (!paths.cert || !paths.key) {
    const [given, missing] = paths.cert ? [names.cert, names.key] : [names.key, names.cert];
    problems.add(missing, `required when ${given} is set (a certificate and its private key go together)`);
    return undefined;
  }
  const cert = readPemFile(names.cert, paths.cert, problems);
  const key = readPemFile(names.key, paths.key, problems);
  if (!cert || !key) return undefined;
  const chain = certificates(names.cert, paths.cert, cert, problems);
  const keyObject = privateKey(names.key, paths.key, key, problems);
  if (!chain || !keyObject) return undefined;
  const leaf = chain[0]!;
  if (!leaf.checkPrivateKey(keyObject)) {
    problems.add(names.key, `${paths.key} is not the private key of the certificate in ${names.cert} (${paths.cert})`);
    return undefined;
  }
  const now = Date.now();
  if (Date.parse(leaf.validTo) < now) problems.add(names.cert, `the certificate in ${paths.cert} expired on ${leaf.validTo}`);
  else if (Date.parse(leaf.validFrom) > now) problems.add(names.cert, `the certificate in ${paths.cert} is not valid before ${leaf.validFrom}`);
  return { cert, key };
}

function caBundle(variable: string, path: string | undefined, problems: Problems): Buffer | undefined {
  if (!path) return undefined;
  const pem = readPemFile(variable, path, problems);
  if (!pem) return undefined;
  return certificates(variable, path, pem, problems) ? pem : undefined;
}

/**
 * GRPC_TLS_CERT + GRPC_TLS_KEY turn the internal port to TLS; GRPC_TLS_CLIENT_CA also
 * requires a client certificate signed by that CA on every connection (mTLS). Undefined
 * when TLS is off. Throws a ConfigError naming each bad setting.
 */
export function loadServerTls(env: Env = process.env): ServerTlsOptions | undefined {
  const settings = loadConfig(internalServerTlsSchema, env);
  const problems = new Problems();
  const pair = certificateAndKey({ cert: "GRPC_TLS_CERT", key: "GRPC_TLS_KEY" }, { cert: settings.GRPC_TLS_CERT, key: settings.GRPC_TLS_KEY }, problems);
  const clientCa = caBundle("GRPC_TLS_CLIENT_CA", settings.GRPC_TLS_CLIENT_CA, problems);
  if (settings.GRPC_TLS_CLIENT_CA && !settings.GRPC_TLS_CERT && !settings.GRPC_TLS_KEY) {
    problems.add("GRPC_TLS_CLIENT_CA", "client certificates are checked only on TLS: set GRPC_TLS_CERT and GRPC_TLS_KEY too");
  }
  problems.throwIfAny();
  if (!pair) return undefined;
  return clientCa ? { ...pair, clientCa } : pair;
}

/**
 * INTERNAL_TLS_CA (trusted for `https://` service URLs instead of the public roots) and
 * INTERNAL_TLS_CERT + INTERNAL_TLS_KEY (client certificate for services that require
 * mTLS). Undefined when none is set. Throws a ConfigError naming each bad setting.
 */
export function loadClientTls(env: Env = process.env): ClientTlsOptions | undefined {
  const settings = loadConfig(internalClientTlsSchema, env);
  const problems = new Problems();
  const ca = caBundle("INTERNAL_TLS_CA", settings.INTERNAL_TLS_CA, problems);
  const pair = certificateAndKey({ cert: "INTERNAL_TLS_CERT", key: "INTERNAL_TLS_KEY" }, { cert: settings.INTERNAL_TLS_CERT, key: settings.INTERNAL_TLS_KEY }, problems);
  problems.throwIfAny();
  if (!ca && !pair) return undefined;
  return { ...(ca ? { ca } : {}), ...(pair ?? {}) };
}
