import { collectStartGarbage, logStartupFailure, stopOnSignals } from "@payments/kit";
import { startAllInOne } from "./index.js";

try {
  const app = await startAllInOne();
  const { services, gateway, console: operatorConsole } = app;
  stopOnSignals(app.stop, services.logger);
  const storage = services.config.DATABASE_URL ? "mysql" : `sqlite in ${services.config.DATA_DIR}`;
  services.logger.info(
    { gateway: gateway.url, gatewayListening: gateway.listening, grpc: services.server.url, console: operatorConsole?.url, storage, bus: services.bus.kind },
    // The bound address first (0.0.0.0 is every interface, so other machines may reach it too), then a URL to open
    // here: the API reference (the gateway's root redirects there too; the API itself is under /v1 and signed).
    `ready: gateway listening on ${gateway.listening} (open ${gateway.url.replace("127.0.0.1", "localhost")}/docs in your browser: the API reference), internal services on ${services.server.url}${operatorConsole ? `, operators' console on ${operatorConsole.url.replace("127.0.0.1", "localhost")}` : ""}`,
  );
  collectStartGarbage();
} catch (err) {
  logStartupFailure("all-in-one", err);
  process.exit(1);
}
