import { logStartupFailure, stopOnSignals } from "@payments/kit";
import { startAllInOne } from "./index.js";

try {
  const app = await startAllInOne();
  const { services, gateway } = app;
  stopOnSignals(app.stop, services.logger);
  const storage = services.config.DATABASE_URL ? "mysql" : `sqlite in ${services.config.DATA_DIR}`;
  services.logger.info(
    { gateway: gateway.url, grpc: services.server.url, storage, bus: services.bus.kind },
    `ready: gateway on ${gateway.url}, internal services on ${services.server.url}`,
  );
} catch (err) {
  logStartupFailure("all-in-one", err);
  process.exit(1);
}
