import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "ava";
import { Namespace, Service, ConfigMap } from "kubernetes-models/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { parseAllDocuments } from "yaml";

// The manifests as an operator applies them: built by kustomize (kubectl's, offline), each
// object validated against the Kubernetes schemas, and the deployment rules checked.
const root = new URL("..", import.meta.url).pathname;
const run = promisify(execFile);

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [key: string]: unknown };
type Container = { name: string; image: string; command?: string[]; livenessProbe?: { httpGet?: { path: string } }; readinessProbe?: { httpGet?: { path: string } }; resources?: { requests?: object; limits?: object }; env?: Array<{ name: string; value?: string; valueFrom?: unknown }>; envFrom?: unknown[] };
type PodSpec = { containers: Container[]; initContainers?: Container[]; securityContext?: { runAsNonRoot?: boolean } };

const models: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/Service": Service,
  "v1/ConfigMap": ConfigMap,
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
};

async function build(dir: string): Promise<Manifest[]> {
  const { stdout } = await run("kubectl", ["kustomize", dir], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((doc) => doc.toJS() as Manifest);
}

const DEPLOYABLES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender", "gateway"];

for (const dir of ["deploy/kubernetes/base", "deploy/kubernetes/overlays/single-namespace"]) {
  test(`${dir}: every object is valid against the Kubernetes schemas`, async (t) => {
    const manifests = await build(dir);
    t.true(manifests.length >= 20);
    for (const m of manifests) {
      const Model = models[`${m.apiVersion}/${m.kind}`];
      if (!Model) return t.fail(`no schema for ${m.apiVersion}/${m.kind} (${m.metadata.name})`);
      t.notThrows(() => new Model(m as never).validate(), `${m.kind}/${m.metadata.name}`);
    }
  });
}

test("the overlay puts everything in one namespace and pins every image", async (t) => {
  const manifests = await build("deploy/kubernetes/overlays/single-namespace");
  t.true(manifests.some((m) => m.kind === "Namespace" && m.metadata.name === "payments"));
  for (const m of manifests.filter((x) => x.kind !== "Namespace")) t.is(m.metadata.namespace, "payments", `${m.kind}/${m.metadata.name}`);
  const pods = manifests.filter((m) => m.kind === "Deployment" || m.kind === "Job").map((m) => (m as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec);
  for (const c of pods.flatMap((p) => [...p.containers, ...(p.initContainers ?? [])])) t.regex(c.image, /^payments\/[a-z-]+:\d+\.\d+\.\d+$/, c.name);
});

test("each service and the gateway: a Deployment running the compiled main, probed on /livez and /readyz, with resources, a Service and a PodDisruptionBudget; settings and secrets by reference", async (t) => {
  const manifests = await build("deploy/kubernetes/base");
  const named = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);
  for (const name of DEPLOYABLES) {
    const deployment = named("Deployment", name) as unknown as { spec: { replicas: number; template: { spec: PodSpec } } } | undefined;
    if (!deployment) return t.fail(`no Deployment ${name}`);
    t.truthy(named("Service", name), `Service ${name}`);
    t.truthy(named("PodDisruptionBudget", name), `PodDisruptionBudget ${name}`);
    t.true(deployment.spec.replicas >= 2, `${name} runs replicas`);
    const pod = deployment.spec.template.spec;
    t.true(pod.securityContext?.runAsNonRoot, `${name} runs as non-root`);
    const [container] = pod.containers;
    t.deepEqual(container?.command, ["node", "dist/main.js"], `${name} runs the compiled build`);
    t.is(container?.livenessProbe?.httpGet?.path, "/livez", name);
    t.is(container?.readinessProbe?.httpGet?.path, "/readyz", name);
    t.truthy(container?.resources?.requests && container.resources.limits, `${name} has requests and limits`);
    t.truthy(container?.envFrom?.length, `${name} takes its settings from the ConfigMap`);
    for (const variable of container?.env ?? []) {
      if (/DATABASE_URL|MASTER_KEY|TOKEN/.test(variable.name)) t.truthy(variable.valueFrom, `${name}: ${variable.name} comes from a Secret, never inline`);
    }
  }
});

test("the migrate Job runs every service's compiled migrate command, one after another", async (t) => {
  const manifests = await build("deploy/kubernetes/base");
  const job = manifests.find((m) => m.kind === "Job") as unknown as { spec: { template: { spec: PodSpec } } } | undefined;
  if (!job) return t.fail("no migrate Job");
  const steps = [...(job.spec.template.spec.initContainers ?? []), ...job.spec.template.spec.containers];
  t.deepEqual(
    steps.map((c) => c.image),
    ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"].map((s) => `payments/${s}-service`),
  );
  for (const step of steps) t.deepEqual(step.command, ["node", "dist/migrate.js", "up"], step.name);
  const config = manifests.find((m) => m.kind === "ConfigMap") as unknown as { data: Record<string, string> };
  t.is(config.data.MIGRATE_ON_START, "0", "services leave migrations to the Job");
});

test("the merchant dashboard is its own Deployment of the console serving merchants only, and the operators' console serves operators only", async (t) => {
  const manifests = await build("deploy/kubernetes/base");
  const envOf = (name: string) => {
    const deployment = manifests.find((m) => m.kind === "Deployment" && m.metadata.name === name) as unknown as { spec: { template: { spec: PodSpec } } } | undefined;
    return Object.fromEntries((deployment?.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
  };
  t.is(envOf("merchant-dashboard").CONSOLE_AUDIENCE, "merchants");
  t.regex(envOf("merchant-dashboard").CONSOLE_PUBLIC_URL ?? "", /^https:\/\//, "its own public address, whose links merchants open");
  t.is(envOf("console").CONSOLE_AUDIENCE, "operators");
  t.truthy(manifests.find((m) => m.kind === "Service" && m.metadata.name === "merchant-dashboard"));
});
