import { runService } from "@payments/access";
import { depositModule } from "./index.js";

// Split mode: this service alone, on DATABASE_URL and NATS_URL, next to
// BANK_CATALOG_SERVICE_URL and MERCHANT_SERVICE_URL.
await runService(depositModule);
