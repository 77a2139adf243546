import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";

// A throwaway PKI made at test time: keys by node:crypto, certificates signed by node-forge.

export interface Issued {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  /** DNS names and IP addresses the certificate is for (server certificates). */
  dns?: string[];
  ips?: string[];
  /** Default: valid from a minute ago for a day. */
  notBefore?: Date;
  notAfter?: Date;
}

export interface TestCa extends Issued {
  /** A certificate for a server (serverAuth), signed by this CA. */
  server(options: IssueOptions): Issued;
  /** A certificate for a client (clientAuth), signed by this CA. */
  client(options: IssueOptions): Issued;
}

function rsaKeyPair(): { publicPem: string; privatePem: string } {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    publicPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privatePem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
  };
}

function certificate(options: {
  subject: string;
  publicPem: string;
  issuer: forge.pki.CertificateField[];
  signingKeyPem: string;
  extensions: object[];
  notBefore?: Date | undefined;
  notAfter?: Date | undefined;
}): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(options.publicPem);
  // Positive, unique serial numbers: a leading 0x01 byte keeps the top bit clear.
  cert.serialNumber = `01${randomBytes(8).toString("hex")}`;
  cert.validity.notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  cert.validity.notAfter = options.notAfter ?? new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: "commonName", value: options.subject }]);
  cert.setIssuer(options.issuer);
  cert.setExtensions(options.extensions);
  cert.sign(forge.pki.privateKeyFromPem(options.signingKeyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** A self-signed CA that issues server and client certificates. */
export function createTestCa(name: string): TestCa {
  const keys = rsaKeyPair();
  const issuer: forge.pki.CertificateField[] = [{ name: "commonName", value: name }];
  const certPem = certificate({
    subject: name,
    publicPem: keys.publicPem,
    issuer,
    signingKeyPem: keys.privatePem,
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      { name: "subjectKeyIdentifier" },
    ],
  });
  const issue = (options: IssueOptions, usage: "serverAuth" | "clientAuth"): Issued => {
    const leaf = rsaKeyPair();
    const altNames = [...(options.dns ?? []).map((value) => ({ type: 2, value })), ...(options.ips ?? []).map((ip) => ({ type: 7, ip }))];
    return {
      keyPem: leaf.privatePem,
      certPem: certificate({
        subject: options.commonName,
        publicPem: leaf.publicPem,
        issuer,
        signingKeyPem: keys.privatePem,
        notBefore: options.notBefore,
        notAfter: options.notAfter,
        extensions: [
          { name: "basicConstraints", cA: false, critical: true },
          { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
          { name: "extKeyUsage", [usage]: true },
          ...(altNames.length > 0 ? [{ name: "subjectAltName", altNames }] : []),
        ],
      }),
    };
  };
  return {
    certPem,
    keyPem: keys.privatePem,
    server: (options) => issue(options, "serverAuth"),
    client: (options) => issue(options, "clientAuth"),
  };
}

/** A temporary directory of PEM files; `path(name)` is where a file was written. */
export function pemDirectory(files: Record<string, string>): { dir: string; path(name: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "kit-tls-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content, { mode: 0o600 });
  return {
    dir,
    path: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The usual set: an internal CA, a server certificate for localhost and 127.0.0.1, a
 * client certificate from the same CA, and one from a rogue CA, written to files.
 */
export function internalPki() {
  const ca = createTestCa("payments internal test CA");
  const rogue = createTestCa("rogue test CA");
  const server = ca.server({ commonName: "localhost", dns: ["localhost"], ips: ["127.0.0.1", "::1"] });
  const client = ca.client({ commonName: "gateway" });
  const rogueClient = rogue.client({ commonName: "intruder" });
  const files = pemDirectory({
    "ca.pem": ca.certPem,
    "server.pem": server.certPem,
    "server-key.pem": server.keyPem,
    "client.pem": client.certPem,
    "client-key.pem": client.keyPem,
    "rogue-ca.pem": rogue.certPem,
    "rogue-client.pem": rogueClient.certPem,
    "rogue-client-key.pem": rogueClient.keyPem,
  });
  return { ca, rogue, server, client, rogueClient, files };
}
