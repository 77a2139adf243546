import { runMigrateCommand } from "@payments/access";
import { bankCatalogModule } from "./index.js";

// `migrate [up|status|unlock]`: the bank-catalog service's migrations, without starting it (a deploy's migrate job).
process.exitCode = await runMigrateCommand([bankCatalogModule], process.argv.slice(2));
