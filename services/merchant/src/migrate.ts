import { runMigrateCommand } from "@payments/access";
import { merchantModule } from "./index.js";

// `migrate [up|status|unlock]`: the merchant service's migrations, without starting it (a deploy's migrate job).
process.exitCode = await runMigrateCommand([merchantModule], process.argv.slice(2));
