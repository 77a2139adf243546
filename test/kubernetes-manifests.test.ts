import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "ava";
import { Namespace, Service, ConfigMap } from "kubernetes-models/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { CronJob, Job } from "kubernetes-models/batch/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { parseAllDocuments } from "yaml";

// The manifests as an operator applies them: built by kustomize (kubectl's, offline), each
// object validated against the Kubernetes schemas, and the deployment rules checked.
const root = new URL("..", import.meta.url).pathname;
const run = promisify(execFile);

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [key: string]: unknown };
type Container = { name: string; image: string; command?: string[]; volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>; livenessProbe?: { httpGet?: { path: string } }; readinessProbe?: { httpGet?: { path: string } }; resources?: { requests?: object; limits?: object }; env?: Array<{ name: string; value?: string; valueFrom?: unknown }>; envFrom?: unknown[] };
type Volume = { name: string; secret?: { secretName: string; defaultMode?: number }; configMap?: { name: string; defaultMode?: number }; emptyDir?: object };
type PodSpec = { containers: Container[]; initContainers?: Container[]; volumes?: Volume[]; securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; runAsGroup?: number; fsGroup?: number } };

const models: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/Service": Service,
  "v1/ConfigMap": ConfigMap,
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "batch/v1/CronJob": CronJob,
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
  const pods = manifests.flatMap((m) => {
    const spec = m as unknown as { spec: { template?: { spec: PodSpec }; jobTemplate?: { spec: { template: { spec: PodSpec } } } } };
    return m.kind === "Deployment" || m.kind === "Job" ? [spec.spec.template!.spec] : m.kind === "CronJob" ? [spec.spec.jobTemplate!.spec.template.spec] : [];
  });
  t.is(pods.length, manifests.filter((m) => ["Deployment", "Job", "CronJob"].includes(m.kind)).length);
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

// Every caller known (deploy/OPERATIONS.md, 1 and 3): each workload its own key, the services the
// trust bundle, and the users that may change a schema (and so the audit) only where migrations run.
const SERVICES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"];
const CALLERS = ["gateway", "console", "merchant-dashboard"];
const KEY_DIR = "/var/run/payments/workload";
const BUNDLE_DIR = "/etc/payments";

function podOf(manifests: Manifest[], kind: string, name: string): PodSpec | undefined {
  const m = manifests.find((x) => x.kind === kind && x.metadata.name === name) as unknown as { spec: { template?: { spec: PodSpec }; jobTemplate?: { spec: { template: { spec: PodSpec } } } } } | undefined;
  return m?.spec.template?.spec ?? m?.spec.jobTemplate?.spec.template.spec;
}

const envMap = (c: Container | undefined) => new Map((c?.env ?? []).map((e) => [e.name, e]));

/** The Secret volumes of a pod whose name is a workload's (payments-workload-<name>). */
const workloadSecrets = (pod: PodSpec) => (pod.volumes ?? []).flatMap((v) => (v.secret?.secretName.startsWith("payments-workload-") ? [v.secret.secretName] : []));

test("each service and caller mounts its own workload key, read-only and readable by its process alone; the services the trust bundle too", async (t) => {
  for (const dir of ["deploy/kubernetes/base", "deploy/kubernetes/overlays/single-namespace"]) {
    const manifests = await build(dir);
    const deployments = manifests.filter((m) => m.kind === "Deployment").map((m) => m.metadata.name);
    t.deepEqual([...deployments].sort(), [...SERVICES, ...CALLERS].sort(), "every Deployment is covered below");
    for (const name of [...SERVICES, ...CALLERS]) {
      const pod = podOf(manifests, "Deployment", name);
      if (!pod) return t.fail(`no Deployment ${name}`);
      const [container] = pod.containers;
      const env = envMap(container);
      t.deepEqual(workloadSecrets(pod), [`payments-workload-${name}`], `${name} gets its own workload Secret and no other`);
      const keyVolume = pod.volumes!.find((v) => v.secret?.secretName === `payments-workload-${name}`)!;
      t.is(keyVolume.secret!.defaultMode, 0o400, `${name}: the key file is 0400`);
      // 0400 root-owned files are read through the group: kubelet adds group read for the fsGroup.
      t.is(pod.securityContext?.fsGroup, pod.securityContext?.runAsGroup, `${name}: the fsGroup is the process's group, so it can read the key`);
      t.is(pod.securityContext?.runAsUser, 1000, name);
      const keyMount = container?.volumeMounts?.find((m) => m.name === keyVolume.name);
      t.like(keyMount, { mountPath: KEY_DIR, readOnly: true }, `${name} mounts its key read-only`);
      t.is(env.get("WORKLOAD_KEY")?.value, `${KEY_DIR}/workload.key`, `${name}: WORKLOAD_KEY is the mounted file`);
      const bundle = pod.volumes!.find((v) => v.configMap?.name === "payments-trust-bundle");
      if (SERVICES.includes(name)) {
        t.deepEqual(env.get("OPERATOR_ASSERTION_PUBLIC_KEY")?.valueFrom, { secretKeyRef: { name: "payments-secrets", key: "operator-assertion-public-key" } }, `${name} believes people's assertions signed with the console's key`);
        t.false(env.has("OPERATOR_ASSERTION_PRIVATE_KEY"), `${name} cannot sign for a person`);
        t.truthy(bundle, `${name} mounts the trust bundle`);
        t.like(container?.volumeMounts?.find((m) => m.name === bundle?.name), { mountPath: BUNDLE_DIR, readOnly: true }, name);
        t.is(env.get("WORKLOAD_TRUST_BUNDLE")?.value, `${BUNDLE_DIR}/trust-bundle.json`, `${name}: WORKLOAD_TRUST_BUNDLE is the mounted file`);
      }
      t.true(container?.volumeMounts?.every((m) => m.name === "tmp" || m.readOnly === true), `${name}: nothing mounted writable but /tmp`);
    }
    const verifier = podOf(manifests, "CronJob", "payments-audit-verify");
    if (!verifier) return t.fail("no audit-verify CronJob");
    t.deepEqual(workloadSecrets(verifier), ["payments-workload-cli"], "the audit check calls as the cli workload");
    const migrate = podOf(manifests, "Job", "payments-migrate")!;
    t.deepEqual(workloadSecrets(migrate), [], "migrations call nobody");
  }
});

test("the runtime user serves and the migrating user migrates: no Deployment but the console's holds a MIGRATE_DATABASE_URL; the migrate Job grants each service's runtime user", async (t) => {
  const manifests = await build("deploy/kubernetes/overlays/single-namespace");
  for (const name of [...SERVICES, "gateway", "merchant-dashboard"]) {
    const env = envMap(podOf(manifests, "Deployment", name)?.containers[0]);
    t.false(env.has("MIGRATE_DATABASE_URL"), `${name} holds no migrating user`);
    t.false(env.has("MIGRATE_GRANT_TO"), name);
  }
  const users = manifests.find((m) => m.kind === "ConfigMap" && m.metadata.name.startsWith("payments-database-users")) as unknown as { metadata: { name: string }; data: Record<string, string> } | undefined;
  if (!users) return t.fail("no payments-database-users ConfigMap");
  const migrate = podOf(manifests, "Job", "payments-migrate")!;
  const steps = [...(migrate.initContainers ?? []), ...migrate.containers];
  for (const service of SERVICES) {
    const env = envMap(steps.find((c) => c.name === `migrate-${service}`));
    t.deepEqual(env.get("DATABASE_URL")?.valueFrom, { secretKeyRef: { name: "payments-secrets", key: `${service}-database-url` } }, service);
    t.deepEqual(env.get("MIGRATE_DATABASE_URL")?.valueFrom, { secretKeyRef: { name: "payments-secrets", key: `${service}-migrate-database-url` } }, service);
    t.deepEqual(env.get("MIGRATE_GRANT_TO")?.valueFrom, { configMapKeyRef: { name: users.metadata.name, key: service } }, service);
    t.is(users.data[service], `${service.replace(/-/g, "_")}_rt@%`, service);
  }
  // The console migrates its own database at start, one replica; the merchant dashboard, sharing it, only waits.
  const consoleEnv = envMap(podOf(manifests, "Deployment", "console")?.containers[0]);
  t.is(consoleEnv.get("MIGRATE_ON_START")?.value, "1");
  t.deepEqual(consoleEnv.get("MIGRATE_DATABASE_URL")?.valueFrom, { secretKeyRef: { name: "payments-secrets", key: "console-migrate-database-url" } });
  t.deepEqual(consoleEnv.get("MIGRATE_GRANT_TO")?.valueFrom, { configMapKeyRef: { name: users.metadata.name, key: "console" } });
  t.is(users.data.console, "console_rt@%");
  const dashboardEnv = envMap(podOf(manifests, "Deployment", "merchant-dashboard")?.containers[0]);
  t.is(dashboardEnv.get("MIGRATE_ON_START")?.value, "0");
  t.deepEqual(dashboardEnv.get("DATABASE_URL")?.valueFrom, consoleEnv.get("DATABASE_URL")?.valueFrom, "the dashboard serves as the console's runtime user");
});

test("the nightly audit check runs the CLI's verify over every service's chain and the console's, as a viewer service account", async (t) => {
  const manifests = await build("deploy/kubernetes/base");
  const cron = manifests.find((m) => m.kind === "CronJob" && m.metadata.name === "payments-audit-verify") as unknown as { spec: { concurrencyPolicy: string } } | undefined;
  if (!cron) return t.fail("no CronJob");
  t.is(cron.spec.concurrencyPolicy, "Forbid");
  const pod = podOf(manifests, "CronJob", "payments-audit-verify")!;
  const [container] = pod.containers;
  t.is(container?.image, "payments/cli");
  const script = container?.command?.join(" ") ?? "";
  t.regex(script, /node dist\/main\.js audit verify --json/);
  t.regex(script, /audit verify --service console --json/);
  const env = envMap(container);
  for (const variable of ["INTERNAL_API_TOKEN", "PAYMENTS_OPERATOR_TOKEN"]) t.truthy(env.get(variable)?.valueFrom, `${variable} from a Secret`);
  t.is(env.get("WORKLOAD_KEY")?.value, `${KEY_DIR}/workload.key`);
  t.true(pod.securityContext?.runAsNonRoot);
});
