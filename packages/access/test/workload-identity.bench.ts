// What a workload identity costs a call (issue 32; BENCHMARKS.md, "Issue 32"). Not a test (ava
// runs only *.test.ts): `node --conditions=source --import tsx packages/access/test/workload-identity.bench.ts [calls]`.
// For each step, `calls` calls after 200 unmeasured: wall time and this process's CPU per call
// (process.cpuUsage). Steps: the signer's answer when it holds a token for the audience (every
// call but one a minute per audience), a fresh signature, the verifier's answer for a token it has
// verified (every call but the first of a token), a first verification (signature check), and the
// all-in-one's in-process proof.
import { systemClock } from "@payments/kit";
import {
  createLocalIdentities,
  createWorkloadSigner,
  generateWorkloadKey,
  loadWorkloadKey,
  spiffeId,
  TrustBundle,
  WorkloadVerifier,
} from "../src/index.js";

const calls = Number(process.argv[2] ?? 20_000);
const key = generateWorkloadKey();
const gateway = spiffeId("payments.local", "gateway");
const bundle = TrustBundle.of([{ spiffeId: gateway, publicKey: key.publicKey }]);
const voice = { merchantId: "mer_bench", keyId: "key_bench", scopes: ["read", "deposits", "withdrawals"] as const, trusted: false };

async function measure(name: string, n: number, step: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 200; i++) await step(i);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await step(i);
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / n;
  const cpu = process.cpuUsage(cpu0);
  console.log(`| ${name} | ${n.toLocaleString("en")} | ${wall.toFixed(2)} | ${((cpu.user + cpu.system) / n).toFixed(2)} |`);
}

const signer = createWorkloadSigner(gateway, loadWorkloadKey(key.privateKeyPem), systemClock);
const verifier = new WorkloadVerifier({ bundle, trustDomain: "payments.local", clock: systemClock });
const heldToken = await signer.tokenFor("deposit", { ...voice, scopes: [...voice.scopes] });
const fresh = Math.max(200, Math.floor(calls / 20));
// Distinct audiences, so that every call signs (a signer keeps one token per audience and voice).
const freshTokens: Array<{ token: string; audience: string }> = [];

console.log("| step | calls | µs/call (wall) | CPU µs/call |");
console.log("|---|---|---|---|");
await measure("sign: a held token (the usual call)", calls, () => signer.tokenFor("deposit", { ...voice, scopes: [...voice.scopes] }));
await measure("sign: a new token (once a minute per audience and voice)", fresh, async (i) => {
  const token = await signer.tokenFor(`svc-${i}`, { ...voice, scopes: [...voice.scopes] });
  freshTokens.push({ token, audience: `svc-${i}` });
});
await measure("verify: a token verified before (the usual call)", calls, () => verifier.verify(heldToken, "deposit"));
let next = 0;
await measure("verify: a first sight (Ed25519 and claims)", fresh, () => {
  const { token, audience } = freshTokens[next++ % freshTokens.length]!;
  // A verifier of its own each time, so none is remembered.
  return new WorkloadVerifier({ bundle, trustDomain: "payments.local", clock: systemClock }).verify(token, audience);
});
const local = createLocalIdentities();
const localVerifier = new WorkloadVerifier({ bundle: undefined, trustDomain: "payments.local", clock: systemClock, local });
await measure("all-in-one: in-process proof, made and checked", calls, () => localVerifier.verify(local.headerFor(gateway, { ...voice, scopes: [...voice.scopes] }), "deposit"));
