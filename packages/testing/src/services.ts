// @payments/testing/services: the real services, for the tests of a package that may not import
// them itself (another service's, the gateway's, the CLI's) and for the end-to-end suites. See
// README.md. Services by name (serviceModule, startInProcess, startSplitDeployment); a peer that
// needs options is made with its own factory.
export { createCallbackModule, type CallbackModuleOptions } from "@payments/callback-sender-service";
export { createPayoutModule, startPayoutWorker, type PayoutContext } from "@payments/payout-service";
export * from "./in-process.js";
export * from "./service-rules.js";
export * from "./split-deployment.js";
export * from "./rpc-walk.js";
