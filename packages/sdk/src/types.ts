import type { paths } from "./openapi.js";

/**
 * The client's types, read out of the generated `paths` of the gateway's OpenAPI document
 * (src/openapi.ts, made by `pnpm --filter @payments/sdk generate`) rather than written again by
 * hand: when the API changes, regenerating changes these.
 */

type Method = "get" | "post";
/** The operation at a path and method. */
export type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** The JSON request body of an operation. */
export type RequestBody<O> = O extends { requestBody?: infer B } ? (NonNullable<B> extends { content: { "application/json": infer J } } ? J : never) : never;

/** The query parameters of an operation. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : never;
type DataOfEnvelope<E> = E extends { data: infer D } ? D : never;

/** The `data` of the success envelope: of the 200 answer, or the 201 of a creation. */
export type ResponseData<O> = O extends { responses: infer R }
  ? R extends { 200: infer A }
    ? DataOfEnvelope<JsonOf<A>>
    : R extends { 201: infer A }
      ? DataOfEnvelope<JsonOf<A>>
      : never
  : never;

export type AvailableBanks = ResponseData<Operation<"/v1/available-banks", "get">>;
export type Bank = AvailableBanks["banks"][number];

export type CreateDepositBody = RequestBody<Operation<"/v1/deposit", "post">>;
export type Deposit = ResponseData<Operation<"/v1/deposit", "post">>;
export type DepositStatus = Deposit["status"];

export type CreateWithdrawalBody = RequestBody<Operation<"/v1/withdraw", "post">>;
export type Withdrawal = ResponseData<Operation<"/v1/withdraw", "post">>;
export type WithdrawalStatus = Withdrawal["status"];

export type Balances = ResponseData<Operation<"/v1/balance", "get">>;

export type TransactionsQuery = QueryOf<Operation<"/v1/transactions", "get">>;
export type TransactionPage = ResponseData<Operation<"/v1/transactions", "get">>;
export type Transaction = TransactionPage["items"][number];

export type EventsQuery = QueryOf<Operation<"/v1/events", "get">>;
export type EventPage = ResponseData<Operation<"/v1/events", "get">>;
export type Event = EventPage["items"][number];

export type SandboxPayBody = RequestBody<Operation<"/v1/sandbox/deposit/{transactionId}/pay", "post">>;

type StatementParameters = QueryOf<Operation<"/v1/statement", "get">>;
/** The statement's currency and days; the format and language are the method's (statement, statementCsv, statementFile). */
export type StatementQuery = Omit<StatementParameters, "format" | "locale">;
/** A statement file's format: csv or xlsx. */
export type StatementFileFormat = Exclude<NonNullable<StatementParameters["format"]>, "json">;
/** A statement file's language: en (default) or tr (Turkish headers; a CSV with `;` between cells and decimal commas). */
export type StatementLocale = NonNullable<StatementParameters["locale"]>;
/** What statementFile asks for: the statement, its file format and language. */
export type StatementFileQuery = StatementQuery & { format: StatementFileFormat; locale?: StatementLocale };
export type Statement = ResponseData<Operation<"/v1/statement", "get">>;
export type StatementMovement = Statement["movements"][number];
export type StatementKind = StatementMovement["kind"];
