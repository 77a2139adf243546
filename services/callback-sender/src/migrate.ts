import { runMigrateCommand } from "@payments/access";
import { callbackModule } from "./index.js";

// `migrate [up|status|unlock]`: the callback-sender service's migrations, without starting it (a deploy's migrate job).
process.exitCode = await runMigrateCommand([callbackModule], process.argv.slice(2));
