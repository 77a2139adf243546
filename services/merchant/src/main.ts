import { runService } from "@payments/access";
import { merchantModule } from "./index.js";

await runService(merchantModule);
