import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary, toBinary, create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  CreateMerchantRequestSchema,
  CreateMerchantResponseSchema,
  GetCredentialsRequestSchema,
  GetCredentialsResponseSchema,
  MerchantStatus,
} from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { merchantModule } from "@payments/merchant-service";
import { TEST_OPERATOR_ENV, testSigner, testWorkloadSigner } from "@payments/testing";

// An internal system in any language uses standard gRPC: here @grpc/grpc-js with nothing
// from Connect, only the message encoding generated from the same protos, the caller's workload
// assertion (x-workload-identity) and the operator's signed assertion (x-operator-assertion) as
// plain metadata.
const dataDir = mkdtempSync(join(tmpdir(), "grpcjs-"));
let running: RunningServices;

test.before(async () => {
  running = await startServices([merchantModule], {
    mode: "split",
    env: { GRPC_PORT: "0", DATA_DIR: dataDir, MASTER_KEY: "b".repeat(64), LOG_LEVEL: "warn", ...TEST_OPERATOR_ENV },
  });
});

test.after.always(async () => {
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (running as typeof running | undefined)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Who calls: an operator through the CLI (the default), or a workload for itself (the gateway reading credentials). */
type Caller = { operator: true; workload: "cli" } | { operator: false; workload: "gateway" };

function unary<I extends DescMessage, O extends DescMessage>(
  client: grpc.Client,
  path: string,
  input: I,
  output: O,
  request: MessageShape<I>,
  caller: Caller = { operator: true, workload: "cli" },
): Promise<MessageShape<O>> {
  return Promise.all([caller.operator ? testSigner().assertionFor("merchant") : undefined, testWorkloadSigner(caller.workload).tokenFor("merchant")])
    .then(([assertion, workload]) => {
      const metadata = new grpc.Metadata();
      metadata.set("x-workload-identity", workload);
      if (assertion) metadata.set("x-operator-assertion", assertion);
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          path,
          (msg: MessageShape<I>) => Buffer.from(toBinary(input, msg)),
          (buf: Buffer) => fromBinary(output, buf),
          request,
          metadata,
          (err, res) => (err ? reject(err) : resolve(res!)),
        );
      });
    });
}

test("a plain @grpc/grpc-js client creates a merchant and reads its credentials", async (t) => {
  const client = new grpc.Client(running.server.url.replace("http://", ""), grpc.credentials.createInsecure());
  t.teardown(() => client.close());
  const created = await unary(
    client,
    "/payments.merchant.v1.MerchantService/CreateMerchant",
    CreateMerchantRequestSchema,
    CreateMerchantResponseSchema,
    create(CreateMerchantRequestSchema, { name: "grpc-js caller", allowedIps: ["203.0.113.0/24"], sandbox: true }),
  );
  t.regex(created.apiSecret, /^sk_/);
  const creds = await unary(
    client,
    "/payments.merchant.v1.MerchantService/GetCredentials",
    GetCredentialsRequestSchema,
    GetCredentialsResponseSchema,
    create(GetCredentialsRequestSchema, { apiKey: created.merchant!.apiKey }),
    { operator: false, workload: "gateway" },
  );
  t.is(creds.merchantId, created.merchant!.id);
  t.is(creds.status, MerchantStatus.ACTIVE);
  t.deepEqual(creds.allowedIps, ["203.0.113.0/24"]);
  t.is(creds.secrets[0]?.secret, created.apiSecret);
});

test("a grpc-js call with a bad argument gets INVALID_ARGUMENT and the reason in metadata", async (t) => {
  const client = new grpc.Client(running.server.url.replace("http://", ""), grpc.credentials.createInsecure());
  t.teardown(() => client.close());
  const err = await t.throwsAsync<grpc.ServiceError>(
    unary(client, "/payments.merchant.v1.MerchantService/CreateMerchant", CreateMerchantRequestSchema, CreateMerchantResponseSchema, create(CreateMerchantRequestSchema, { name: " " })),
  );
  t.is(err.code, grpc.status.INVALID_ARGUMENT);
  t.is(err.metadata.get("x-error-reason")[0], "VALIDATION_ERROR");
});
