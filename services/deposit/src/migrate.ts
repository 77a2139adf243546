import { runMigrateCommand } from "@payments/access";
import { depositModule } from "./index.js";

// `migrate [up|status|unlock]`: the deposit service's migrations, without starting it (a deploy's migrate job).
process.exitCode = await runMigrateCommand([depositModule], process.argv.slice(2));
