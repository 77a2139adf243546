import net from "node:net";
import test from "ava";
import { createPublicKey } from "node:crypto";
import { loadWorkloadKey, OPERATOR_CARRIERS, WorkloadVerifier, keyIdOf } from "@payments/access";
import { OUTBOX_LEASE_MS, systemClock } from "@payments/kit";
import { freePort } from "@payments/testing";
import { Balancer } from "../src/balancer.js";
import { FakeBank } from "../src/bank.js";
import { COMPONENTS, HARNESS_WORKLOADS, RUN_SETTINGS } from "../src/deployment.js";
import { RunWorkloads } from "../src/identities.js";
import { FAULT_KINDS, planFaults } from "../src/faults.js";
import { Random } from "../src/rng.js";

// The chaos run's own parts, without a deployment: the schedule a seed gives, the balancer
// that stands in for a Service, the bank that counts sends. The run itself is `pnpm test:chaos`.

test("a seed gives the same fault schedule every time, another seed another one", (t) => {
  const plan = (seed: number) => planFaults(new Random(seed, 1), 120_000);
  t.deepEqual(plan(2111), plan(2111));
  t.notDeepEqual(plan(2111), plan(2112));
});

test("every kind of fault comes up in a two-minute schedule, inside the load, and pauses outlast the leases they test", (t) => {
  for (const seed of [1, 2111, 424242, 99]) {
    const plan = planFaults(new Random(seed, 1), 120_000);
    t.deepEqual([...new Set(plan.map((f) => f.kind))].sort(), [...FAULT_KINDS].sort(), `seed ${seed}`);
    for (const fault of plan) {
      t.true(fault.atMs >= 5_000 && fault.atMs < 120_000 - 15_000, `seed ${seed}: ${fault.kind} at ${fault.atMs}`);
      if (fault.kind === "pause") t.true(fault.forMs > Math.max(RUN_SETTINGS.resendAfterMs, RUN_SETTINGS.callbackClaimMs, OUTBOX_LEASE_MS), "past the payout resend, the callback claim and the outbox lease");
      if (fault.kind === "kill9" || fault.kind === "pause") t.truthy(fault.target);
    }
  }
});

test("the load's random stream does not move the schedule", (t) => {
  const load = new Random(7, 2);
  for (let i = 0; i < 1000; i++) load.int(0, 100);
  t.deepEqual(planFaults(new Random(7, 1), 60_000), planFaults(new Random(7, 1), 60_000));
});

async function echoServer(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return server;
}

async function roundTrip(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" }, () => socket.write(text));
    socket.once("data", (data) => {
      resolve(data.toString());
      socket.destroy();
    });
    socket.once("error", reject);
    socket.once("close", () => resolve(""));
  });
}

test("the balancer skips a replica that refuses connections, and refuses only when none is left", async (t) => {
  const [up, down, front] = [await freePort(), await freePort(), await freePort()];
  const server = await echoServer(up);
  const balancer = new Balancer("echo", [down, up]);
  await balancer.listen(front);
  try {
    for (let i = 0; i < 4; i++) t.is(await roundTrip(front, `hello ${i}`), `hello ${i}`, "every connection reaches the live replica");
    t.is(balancer.refused, 0);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    t.is(await roundTrip(front, "nobody"), "", "no replica: the connection is closed");
    t.is(balancer.refused, 1);
  } finally {
    await balancer.close();
  }
});

test("the bank answers a repeated send with its first answer and counts it; a changed instruction under the same key is a conflict", async (t) => {
  const bank = new FakeBank();
  await bank.start();
  try {
    const send = async (body: object) => (await fetch(`${bank.url}/transfers`, { method: "POST", body: JSON.stringify(body) })).json() as Promise<{ outcome: string }>;
    const instruction = { idempotencyKey: "wdr_1", amount: 1000, currency: "TRY", iban: "TR330006100519786457841329", accountName: "Ali", description: "p1" };
    const first = await send(instruction);
    t.deepEqual(await send(instruction), first);
    t.deepEqual(bank.resent(), ["wdr_1"]);
    t.deepEqual(bank.conflicting, []);
    await send({ ...instruction, amount: 2000 });
    t.deepEqual(bank.conflicting, ["wdr_1"]);
    t.is(bank.executed.size, 1);
  } finally {
    await bank.close();
  }
});

test("every deployable and every workload the run plays has a key of its own, and the services believe the run's calls as chaos and as its bank integration", async (t) => {
  const workloads = new RunWorkloads([...COMPONENTS, ...HARNESS_WORKLOADS]);
  const paths = [...COMPONENTS, ...HARNESS_WORKLOADS];
  const keyIds = paths.map((path) => keyIdOf(createPublicKey(loadWorkloadKey(workloads.keyOf(path)))));
  t.is(new Set(keyIds).size, paths.length, "no two workloads share a key: the harness's are none of the services'");
  t.is(workloads.bundle.size, paths.length);
  for (const [i, path] of paths.entries()) t.is(workloads.bundle.key(keyIds[i]!)?.spiffeId, `spiffe://payments.local/${path}`);
  const env = workloads.envOf("deposit");
  t.is(env.WORKLOAD_KEY, workloads.keyOf("deposit"));
  t.deepEqual(JSON.parse(env.WORKLOAD_TRUST_BUNDLE!), workloads.bundle.toJson());

  const verifier = new WorkloadVerifier({ bundle: workloads.bundle, trustDomain: "payments.local", clock: systemClock });
  const chaos = await verifier.verify(await workloads.caller("chaos").headerFor("payout"), "payout");
  t.is(chaos.name, "chaos");
  t.true(OPERATOR_CARRIERS.includes(chaos.name!), "chaos carries its operators' calls");
  const bank = await verifier.verify(await workloads.caller("bank-integration/chaos").headerFor("deposit"), "deposit");
  t.is(bank.name, "bank-integration");
  t.is(bank.path, "bank-integration/chaos");
  await t.throwsAsync(verifier.verify(await workloads.caller("chaos").headerFor("payout"), "deposit"), undefined, "an assertion for one service is refused by another");
});
