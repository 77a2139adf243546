// @payments/testing: the test harness. Only tests (`*/test/**`, `test/**`) and the bench import
// it; the services in process are in `@payments/testing/services`. See README.md.
export * from "./callback-receiver.js";
export * from "./clock.js";
export * from "./databases.js";
export * from "./eventually.js";
export * from "./iban.js";
export * from "./jetstream.js";
export * from "./own-servers.js";
export * from "./ports.js";
export * from "./processes.js";
export * from "./receiving-accounts.js";
export * from "./random.js";
export * from "./rejection.js";
export * from "./tracing.js";
export * from "./builders.js";
export * from "./operators.js";
export * from "./day-summaries.js";
export * from "./workloads.js";
