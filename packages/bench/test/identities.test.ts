import { createPublicKey } from "node:crypto";
import test from "ava";
import { keyIdOf, loadAssertionPublicKey, loadWorkloadKey, OPERATOR_CARRIERS, TrustBundle, verifyAssertion, WorkloadVerifier } from "@payments/access";
import { systemClock } from "@payments/kit";
import { BENCH_OPERATOR, BENCH_WORKLOADS, benchIdentities } from "../src/identities.js";

// Who the bench is to the product, without a product: its keys, its bundle, its operator's
// assertions as a service verifies them. `pnpm bench` itself is the run.

test("the bench's workloads and each process it starts have keys of their own, all in the bundle the processes believe", async (t) => {
  const processes = ["merchant", "deposit", "gateway"];
  const identities = benchIdentities(processes);
  const paths = [...BENCH_WORKLOADS, ...processes];
  const keyIds = paths.map((path) => keyIdOf(createPublicKey(loadWorkloadKey(identities.workloads.keyOf(path)))));
  t.is(new Set(keyIds).size, paths.length, "the bench's keys are none of the services'");
  const env = identities.workloads.envOf("deposit");
  t.is(env.WORKLOAD_KEY, identities.workloads.keyOf("deposit"));
  const bundle = TrustBundle.load(env.WORKLOAD_TRUST_BUNDLE!);
  for (const [i, path] of paths.entries()) t.is(bundle.key(keyIds[i]!)?.spiffeId, `spiffe://payments.local/${path}`);
  t.is(identities.workloads.trustEnv().WORKLOAD_KEY, undefined, "the all-in-one is given the bundle only");

  const verifier = new WorkloadVerifier({ bundle, trustDomain: "payments.local", clock: systemClock });
  const bench = await verifier.verify(await identities.workloads.caller("bench").headerFor("deposit"), "deposit");
  t.true(OPERATOR_CARRIERS.includes(bench.name!), "bench carries its operator");
  const bank = await verifier.verify(await identities.workloads.caller("bank-integration/bench").headerFor("deposit"), "deposit");
  t.is(bank.path, "bank-integration/bench");
  t.is(bank.name, "bank-integration");
});

test("the bench's operator signs assertions a service accepts (at most 60 s), a fresh one for each change", async (t) => {
  const identities = benchIdentities();
  const publicKey = loadAssertionPublicKey(identities.operatorEnv.OPERATOR_ASSERTION_PUBLIC_KEY);
  const read = await identities.operator.assertionFor("deposit");
  t.like(await verifyAssertion(publicKey, read, "deposit"), { subject: BENCH_OPERATOR.subject, role: "admin", kind: "service" });
  t.is(await identities.operator.assertionFor("deposit"), read, "reads reuse theirs");
  const change = await identities.operator.assertionFor("deposit", { fresh: true });
  t.not(change, read);
  t.not(await identities.operator.assertionFor("deposit", { fresh: true }), change, "never one used before");
  await t.throwsAsync(verifyAssertion(publicKey, read, "payout"), undefined, "one service's assertion is refused by another");
});
