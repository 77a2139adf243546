import { runMigrateCommand } from "@payments/access";
import { allModules } from "./index.js";

// `migrate [up|status|unlock]` for every service, on the databases the all-in-one start uses:
// with DATABASE_URL one derived database per service (`<db>_merchant`, …), else DATA_DIR/<service>.sqlite.
process.exitCode = await runMigrateCommand([...allModules], process.argv.slice(2), { mode: "all-in-one" });
