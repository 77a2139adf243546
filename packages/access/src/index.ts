export * from "./operator-assertion.js";
export * from "./operator-access.js";
export * from "./operator-audit.js";
export * from "./approvals.js";
export { auditRecordOf } from "./operator-services.js";
export * from "./guard.js";
