// The services' own request rules and seed, for the gateway test that checks the OpenAPI
// document states the limits the services enforce (gateway/test/openapi-limits.test.ts). Not
// part of the services' public exports, hence the paths into their sources.
export { seedBankId, SEED_BANK_LIST } from "../../../services/bank-catalog/src/seed.js";
export { eventId, optionalTransactionId } from "../../../services/callback-sender/src/requests.js";
export { REFERENCE_ALPHABET, REFERENCE_LENGTH } from "../../../services/deposit/src/reference.js";
export { checkoutToken, depositId, METADATA_MAX_BYTES, processId as depositProcessId, text as depositText } from "../../../services/deposit/src/requests.js";
export { iban as payoutIban, processId as payoutProcessId, text as payoutText, turkishIbanProblem, withdrawalId } from "../../../services/payout/src/requests.js";
