import { runService } from "@payments/kit";
import { bankCatalogModule } from "./index.js";

await runService(bankCatalogModule);
