import net from "node:net";
import { TEST_OPERATOR_PRIVATE_KEY_PEM, testWorkloadKeyPem } from "@payments/testing";
import type { Io } from "../src/io.js";
import { run } from "../src/program.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in this process with captured streams and only the given environment, signing
 * its operator assertions with the test operators' key (as whoever --actor or PAYMENTS_OPERATOR
 * names) and its calls as the test `cli` workload, unless the environment says otherwise.
 */
export async function cli(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  env = { OPERATOR_ASSERTION_PRIVATE_KEY: TEST_OPERATOR_PRIVATE_KEY_PEM, PAYMENTS_OPERATOR: "cli-test", WORKLOAD_KEY_CLI: testWorkloadKeyPem("cli"), ...env };
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  };
  const code = await run(args, io);
  return { code, stdout, stderr };
}

/** The one JSON document a --json run printed; throws unless stdout is exactly one line of JSON. */
export function singleJson(stdout: string): unknown {
  const lines = stdout.split("\n");
  if (lines.length !== 2 || lines[1] !== "") throw new Error(`expected one line of JSON, got: ${JSON.stringify(stdout)}`);
  return JSON.parse(lines[0] ?? "");
}

/** A local port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
