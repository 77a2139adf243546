import { runMigrateCommand } from "@payments/access";
import { payoutModule } from "./index.js";

// `migrate [up|status|unlock]`: the payout service's migrations, without starting it (a deploy's migrate job).
process.exitCode = await runMigrateCommand([payoutModule], process.argv.slice(2));
