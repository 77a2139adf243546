import { collectStartGarbage, logStartupFailure, stopOnSignals } from "@payments/kit";
import { startGateway } from "./server.js";

// Split mode: one gateway process (of possibly several replicas) in front of the services named by *_SERVICE_URL;
// its rate limits default to the bucket every replica shares when NATS_URL is set (RATE_LIMIT_STORE).
try {
  const gateway = await startGateway({ split: true });
  stopOnSignals(gateway.stop, gateway.logger);
  gateway.logger.info({ port: gateway.port, metricsPort: gateway.metricsPort, publicBaseUrl: gateway.config.PUBLIC_BASE_URL }, "gateway ready");
  collectStartGarbage();
} catch (err) {
  logStartupFailure("gateway", err);
  process.exit(1);
}
