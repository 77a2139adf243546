import { runService } from "@payments/access";
import { callbackModule } from "./index.js";

// Split mode: this service alone, on DATABASE_URL and NATS_URL (it consumes the deposit and
// payout services' status events), next to MERCHANT_SERVICE_URL.
await runService(callbackModule);
