import test from "ava";
import { reconciliationFlowSuite } from "./reconciliation-flow-suite.js";

// The suite on the embedded storage (SQLite files in the suite's DATA_DIR).
reconciliationFlowSuite(test, async () => ({ env: {}, drop: async () => undefined }));
