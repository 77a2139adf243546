import net from "node:net";
import test from "ava";
import { resolveEndpoints } from "../src/clients.js";
import { consoleUrl } from "../src/console-session.js";
import { localConsoleUrl, localGatewayUrl, localGrpcUrl } from "../src/local-addresses.js";
import { cli } from "./capture.js";

/*
 * `pnpm cli` reaches the all-in-one that `pnpm start` started in the same shell: with PORT,
 * GRPC_PORT or CONSOLE_PORT set (the all-in-one's settings), the CLI's default addresses follow
 * them; its own settings and flags still win.
 */

test("without any setting the defaults are the all-in-one's ports, 9090, 8081 and 8080", (t) => {
  t.is(localGrpcUrl({}), "http://127.0.0.1:9090");
  t.is(localConsoleUrl({}), "http://127.0.0.1:8081");
  t.is(localGatewayUrl({}), "http://localhost:8080");
  t.is(resolveEndpoints({}, {}).merchant, "http://127.0.0.1:9090");
  t.is(consoleUrl({}), "http://127.0.0.1:8081");
  // Empty counts as unset.
  t.is(localGrpcUrl({ GRPC_PORT: " " }), "http://127.0.0.1:9090");
});

test("GRPC_PORT and CONSOLE_PORT move the defaults; GRPC_URL, *_SERVICE_URL, --grpc-url and CONSOLE_URL still win", (t) => {
  const env = { GRPC_PORT: "19090", CONSOLE_PORT: "18081", PORT: "18080" };
  const endpoints = resolveEndpoints({}, env);
  t.deepEqual([endpoints.merchant, endpoints.bankCatalog, endpoints.deposit, endpoints.payout, endpoints.callbackSender], Array(5).fill("http://127.0.0.1:19090"));
  t.is(consoleUrl(env), "http://127.0.0.1:18081");
  t.is(localGatewayUrl(env), "http://localhost:18080");

  t.is(resolveEndpoints({}, { ...env, GRPC_URL: "http://shared:7000" }).deposit, "http://shared:7000");
  t.is(resolveEndpoints({}, { ...env, DEPOSIT_SERVICE_URL: "http://deposit:7001" }).deposit, "http://deposit:7001");
  t.is(resolveEndpoints({}, { ...env, DEPOSIT_SERVICE_URL: "http://deposit:7001" }).payout, "http://127.0.0.1:19090");
  t.is(resolveEndpoints({ grpcUrl: "http://flag:7002" }, env).deposit, "http://flag:7002");
  t.is(consoleUrl({ ...env, CONSOLE_URL: "http://console.internal:7003" }), "http://console.internal:7003");
});

test("a port setting that is no port is a usage error naming it and the address setting to use instead", (t) => {
  for (const bad of ["abc", "70000", "-1", "80.5", "8080x"]) {
    t.throws(() => resolveEndpoints({}, { GRPC_PORT: bad }), { message: new RegExp(`GRPC_PORT must be a port number from 1 to 65535.*got "${bad.replace(".", "\\.")}".*GRPC_URL`) }, bad);
  }
  t.throws(() => consoleUrl({ CONSOLE_PORT: "0" }), { message: /CONSOLE_PORT is 0 .* set CONSOLE_URL/ });
  // The setting of the address given instead is not needed, so a bad port beside it is no error.
  t.is(resolveEndpoints({}, { GRPC_PORT: "abc", GRPC_URL: "http://shared:7000" }).merchant, "http://shared:7000");
  t.is(consoleUrl({ CONSOLE_PORT: "abc", CONSOLE_URL: "http://console:7003" }), "http://console:7003");
});

/** A port that counts the connections made to it and closes each at once. */
async function countingPort(t: { teardown(fn: () => Promise<void>): void }): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

test("the commands call the ports the all-in-one's settings name: services, console and gateway", async (t) => {
  const grpc = await countingPort(t);
  const consolePort = await countingPort(t);
  const gateway = await countingPort(t);
  const env = { GRPC_PORT: String(grpc.port), CONSOLE_PORT: String(consolePort.port), PORT: String(gateway.port) };

  const banks = await cli(["bank", "list"], env);
  t.is(banks.code, 1);
  t.true(grpc.connections() >= 1, "the bank list was asked at GRPC_PORT");

  const operators = await cli(["operator", "list"], { ...env, PAYMENTS_OPERATOR_TOKEN: "a-service-account-token" });
  t.is(operators.code, 1);
  t.regex(operators.stderr, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${consolePort.port}`));
  t.true(consolePort.connections() >= 1, "the operator list was asked at CONSOLE_PORT");

  const request = await cli(["request", "GET", "/v1/balance", "--api-key", "pk_x", "--api-secret", "sk_x"], env);
  t.is(request.code, 1);
  t.regex(request.stderr, new RegExp(`cannot reach http://localhost:${gateway.port}`));
  t.true(gateway.connections() >= 1, "the signed request went to PORT");

  // The CLI's own settings win: nothing more reaches the ports.
  const before = grpc.connections();
  const elsewhere = await cli(["bank", "list", "--grpc-url", `http://127.0.0.1:${consolePort.port}`], env);
  t.is(elsewhere.code, 1);
  t.is(grpc.connections(), before);
});
