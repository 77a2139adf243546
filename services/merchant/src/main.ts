import { runService } from "@payments/kit";
import { merchantModule } from "./index.js";

await runService(merchantModule);
