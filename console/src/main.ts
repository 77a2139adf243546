import { collectStartGarbage, logStartupFailure, stopOnSignals } from "@payments/kit";
import { startConsole } from "./server.js";

// Split mode: one console process in front of the services named by *_SERVICE_URL, on its own database.
try {
  const running = await startConsole({ split: true });
  stopOnSignals(running.stop, running.logger);
  running.logger.info({ port: running.port, publicUrl: running.context.publicUrl }, "console ready");
  collectStartGarbage();
} catch (err) {
  logStartupFailure("console", err);
  process.exit(1);
}
