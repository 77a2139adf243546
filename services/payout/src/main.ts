import { runService } from "@payments/access";
import { payoutModule } from "./index.js";

// Split mode: this service alone, on DATABASE_URL and NATS_URL (it consumes the deposit
// service's completed-deposit events), next to BANK_CATALOG_SERVICE_URL.
await runService(payoutModule);
