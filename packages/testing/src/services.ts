// @payments/testing/services: the real services, for the tests of a package that may not import
// them itself (another service, the gateway, the CLI). See README.md.
export { bankCatalogModule, seedSandboxAccounts } from "@payments/bank-catalog-service";
export { callbackModule, createCallbackModule, type CallbackModuleOptions } from "@payments/callback-sender-service";
export { DEPOSIT_TOPICS, depositModule } from "@payments/deposit-service";
export { merchantModule } from "@payments/merchant-service";
export { createPayoutModule, payoutModule, startPayoutWorker, type PayoutContext } from "@payments/payout-service";
export * from "./service-rules.js";
export * from "./in-process.js";
export * from "./split-deployment.js";
