import { startDemoShop } from "./app.js";
import { loadConfig } from "./config.js";

/** `pnpm demo`: the demo shop beside a running `pnpm start` (see README.md for the settings). */
const config = loadConfig();
try {
  const shop = await startDemoShop(config);
  console.log(`demo shop ready on ${shop.url} (merchant ${shop.credentials.merchantId}, gateway ${config.gatewayUrl}, callbacks to ${shop.callbackUrl})`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void shop.stop().then(() => process.exit(0)));
  }
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`demo shop failed to start: ${message}`);
  if (/CALLBACK_ALLOW_PRIVATE/.test(message)) {
    console.error("The gateway refuses callbacks to this machine: start it with `CALLBACK_ALLOW_PRIVATE=1 pnpm start`, or set DEMO_PUBLIC_URL to an address it can reach.");
  } else if (/ECONNREFUSED|NETWORK_ERROR|UNAVAILABLE/.test(message)) {
    console.error(`Is the gateway running? Start it with \`CALLBACK_ALLOW_PRIVATE=1 pnpm start\` (GATEWAY_URL=${config.gatewayUrl}; the CLI uses GRPC_URL, default http://127.0.0.1:9090).`);
  }
  process.exit(1);
}
