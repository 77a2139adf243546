import { logStartupFailure, stopOnSignals } from "@payments/kit";
import { startGateway } from "./server.js";

// Split mode: one gateway process in front of the services named by *_SERVICE_URL.
try {
  const gateway = await startGateway();
  stopOnSignals(gateway.stop, gateway.logger);
  gateway.logger.info({ port: gateway.port, metricsPort: gateway.metricsPort, publicBaseUrl: gateway.config.PUBLIC_BASE_URL }, "gateway ready");
} catch (err) {
  logStartupFailure("gateway", err);
  process.exit(1);
}
