import { runService } from "@payments/access";
import { bankCatalogModule } from "./index.js";

await runService(bankCatalogModule);
