import { JetStreamBus } from "@payments/kit";
import { uniqueName } from "./databases.js";

/** NATS server for tests: NATS_TEST_URL, default the local JetStream server. */
export const natsTestUrl = process.env.NATS_TEST_URL ?? "nats://127.0.0.1:4222";

/** The settings of a JetStream deployment of a test's own. */
export interface JetStreamTestEnv {
  NATS_URL: string;
  NATS_STREAM: string;
  NATS_SUBJECT_PREFIX: string;
}

/** Environment for a JetStream deployment of its own (stream and subject prefix), so parallel tests never see each other's events. */
export function jetStreamTestEnv(): JetStreamTestEnv {
  const id = uniqueName("t");
  return { NATS_URL: natsTestUrl, NATS_STREAM: id.toUpperCase(), NATS_SUBJECT_PREFIX: id };
}

/** Deletes the stream named in a jetStreamTestEnv(), and the split gateway's rate-limit bucket of that deployment if one was made. */
export async function deleteTestStream(env: JetStreamTestEnv): Promise<void> {
  const bus = await JetStreamBus.connect({ url: env.NATS_URL, stream: env.NATS_STREAM, subjectPrefix: env.NATS_SUBJECT_PREFIX });
  await bus.deleteStream();
  await (await bus.manager()).streams.delete(`KV_${env.NATS_STREAM}_RATE_LIMITS`).catch(() => undefined);
  await bus.close();
}
