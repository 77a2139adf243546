import { PaymentsError } from "./errors.js";
import { paginate, type Paginated } from "./pages.js";
import { Transport, type Download, type FetchLike, type QueryValues } from "./transport.js";
import type {
  AvailableBanks,
  Balances,
  CreateDepositBody,
  CreateWithdrawalBody,
  Deposit,
  Event,
  EventPage,
  Statement,
  StatementFileQuery,
  StatementQuery,
  EventsQuery,
  SandboxPayBody,
  Transaction,
  TransactionPage,
  TransactionsQuery,
  Withdrawal,
} from "./types.js";

export interface PaymentsClientOptions {
  /** The gateway's address, e.g. "https://api.example.com" (a path prefix is kept and signed). */
  baseUrl: string;
  /** X-API-Key of the merchant. */
  apiKey: string;
  /** The secret the requests are signed with. Server-side only: never ship it to a browser. */
  apiSecret: string;
  /** A fetch to use instead of Node's global one. */
  fetch?: FetchLike;
  /** Retries of a request that got no answer, a 429 or a 5xx. Default 2; 0 turns retrying off. */
  maxRetries?: number;
  /** Per attempt, in ms; an attempt that takes longer is abandoned (and retried). Default 30 000. */
  timeoutMs?: number;
  /** First back-off in ms, doubled for each later retry, with jitter. Default 500. */
  retryBaseDelayMs?: number;
  /** The longest the client waits before a retry, whatever the back-off or Retry-After says. Default 30 000. */
  retryMaxDelayMs?: number;
}

/** A statement file as statementFile returns it. */
export type StatementFile = Download;

/** Per-call options. */
export interface CallOptions {
  /** Cancels the call, waiting retries included; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

const id = (value: string) => {
  if (typeof value !== "string" || value === "") throw new TypeError("an id must be a non-empty string");
  return encodeURIComponent(value);
};

/**
 * The gateway's merchant API. Every call is signed (X-API-Key, X-Timestamp, X-Signature),
 * failures come back as `PaymentsError`, and what a call returns is the envelope's `data`.
 */
export class PaymentsClient {
  readonly #transport: Transport;
  /** Sandbox-only helpers: a live merchant's call is refused with 403 SANDBOX_ONLY. */
  readonly sandbox: SandboxApi;

  constructor(options: PaymentsClientOptions) {
    this.#transport = new Transport(options);
    this.sandbox = new SandboxApi(this.#transport);
  }

  async #get<T>(path: string, query?: QueryValues, options?: CallOptions): Promise<T> {
    return (await this.#transport.request<T>({ method: "GET", path, query, signal: options?.signal })).data;
  }

  async #post<T>(path: string, body?: unknown, options?: CallOptions): Promise<T> {
    return (await this.#transport.request<T>({ method: "POST", path, body, signal: options?.signal })).data;
  }

  /** The banks open to this merchant with their limits, and FAST when available. Cache it for a few hours. */
  availableBanks(options?: CallOptions): Promise<AvailableBanks> {
    return this.#get("/v1/available-banks", undefined, options);
  }

  /**
   * Creates a deposit; send the customer to its `checkoutUrl`. When a retry (after a timeout
   * or 5xx) is refused as DUPLICATE_TRANSACTION, an earlier attempt did create it: that
   * deposit is read by processId and returned, so a retried creation is idempotent.
   */
  createDeposit(body: CreateDepositBody, options?: CallOptions): Promise<Deposit> {
    return this.#create(
      () => this.#post<Deposit>("/v1/deposit", body, options),
      () => this.getDepositByProcessId(body.processId, options),
    );
  }

  getDeposit(transactionId: string, options?: CallOptions): Promise<Deposit> {
    return this.#get(`/v1/deposit/${id(transactionId)}`, undefined, options);
  }

  /** The deposit of your own processId: how to find out what happened to a creation you never got an answer to. */
  getDepositByProcessId(processId: string, options?: CallOptions): Promise<Deposit> {
    return this.#get("/v1/deposit", { processId }, options);
  }

  /** Cancels a pending deposit; cancelling a cancelled one again answers it unchanged. */
  cancelDeposit(transactionId: string, options?: CallOptions): Promise<Deposit> {
    return this.#post(`/v1/deposit/${id(transactionId)}/cancel`, undefined, options);
  }

  /** Creates a withdrawal (only from an allow-listed IP). Idempotent on retries, like createDeposit. */
  createWithdrawal(body: CreateWithdrawalBody, options?: CallOptions): Promise<Withdrawal> {
    return this.#create(
      () => this.#post<Withdrawal>("/v1/withdraw", body, options),
      () => this.getWithdrawalByProcessId(body.processId, options),
    );
  }

  getWithdrawal(transactionId: string, options?: CallOptions): Promise<Withdrawal> {
    return this.#get(`/v1/withdraw/${id(transactionId)}`, undefined, options);
  }

  getWithdrawalByProcessId(processId: string, options?: CallOptions): Promise<Withdrawal> {
    return this.#get("/v1/withdraw", { processId }, options);
  }

  /** Cancels a withdrawal that is still pending; once processing it is 409 INVALID_TRANSACTION_STATE. */
  cancelWithdrawal(transactionId: string, options?: CallOptions): Promise<Withdrawal> {
    return this.#post(`/v1/withdraw/${id(transactionId)}/cancel`, undefined, options);
  }

  /** Available and held amounts per currency. */
  balance(options?: CallOptions): Promise<Balances> {
    return this.#get("/v1/balance", undefined, options);
  }

  /**
   * Your statement of one currency over whole UTC days (`from` and `to` are YYYY-MM-DD, both
   * included, at most 366 days): opening balance, every movement with the balance after it,
   * closing balance. Balances are available + held, in the smallest currency unit.
   */
  statement(query: StatementQuery, options?: CallOptions): Promise<Statement> {
    return this.#get("/v1/statement", { ...query }, options);
  }

  /**
   * The same statement as the CSV file the gateway offers for download (UTF-8, CRLF, RFC 4180,
   * English), as text: decoded, so without the file's leading byte-order mark. To save the
   * file itself, or to have it in Turkish or as a spreadsheet, use statementFile.
   */
  async statementCsv(query: StatementQuery, options?: CallOptions): Promise<string> {
    const answer = await this.#transport.request<string>({ method: "GET", path: "/v1/statement", query: { ...query, format: "csv" }, signal: options?.signal, text: "text/csv" });
    return answer.data;
  }

  /**
   * The statement as the file the gateway offers for download, byte for byte, with the name
   * it gives it: `format` csv (starting with a UTF-8 byte-order mark) or xlsx (an Excel
   * workbook), `locale` en (default) or tr (Turkish headers; a CSV with `;` between cells and
   * decimal commas). Write `bytes` to a file as they are: `writeFile(file.fileName, file.bytes)`.
   */
  async statementFile(query: StatementFileQuery, options?: CallOptions): Promise<StatementFile> {
    const answer = await this.#transport.request<Download>({ method: "GET", path: "/v1/statement", query: { ...query }, signal: options?.signal, download: true });
    return answer.data;
  }

  /**
   * Deposits and withdrawals, newest first, across every page:
   * `for await (const tx of client.transactions({ status: "completed" }))`. Nothing is
   * requested until iteration starts; `limit` is the page size.
   */
  transactions(query: TransactionsQuery = {}, options?: CallOptions): Paginated<Transaction, TransactionPage> {
    return this.#list<Transaction, TransactionPage>("/v1/transactions", query, options);
  }

  /** The callback events sent to you, newest first, across every page; iterate like `transactions`. */
  events(query: EventsQuery = {}, options?: CallOptions): Paginated<Event, EventPage> {
    return this.#list<Event, EventPage>("/v1/events", query, options);
  }

  /** Sends an event's callback again (a failed or delivered one comes back pending). */
  redeliverEvent(eventId: string, options?: CallOptions): Promise<Event> {
    return this.#post(`/v1/events/${id(eventId)}/redeliver`, undefined, options);
  }

  #list<Item, Page extends { items: Item[]; nextCursor?: string | null }>(path: string, query: object, options?: CallOptions): Paginated<Item, Page> {
    const { cursor, ...rest } = query as QueryValues;
    return paginate<Item, Page>(typeof cursor === "string" ? cursor : undefined, (next) => this.#get<Page>(path, { ...rest, cursor: next }, options));
  }

  async #create<T>(create: () => Promise<T>, lookup: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (error) {
      if (error instanceof PaymentsError && error.code === "DUPLICATE_TRANSACTION" && error.attempts > 1) return lookup();
      throw error;
    }
  }
}

/** POST /v1/sandbox/…: move a sandbox merchant's deposit without a real bank transfer. */
export class SandboxApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Pays a pending sandbox deposit as if the customer had transferred `amount` (default: the deposit's amount). */
  async payDeposit(transactionId: string, body: SandboxPayBody = {}, options?: CallOptions): Promise<Deposit> {
    return (await this.#transport.request<Deposit>({ method: "POST", path: `/v1/sandbox/deposit/${id(transactionId)}/pay`, body, signal: options?.signal })).data;
  }

  /** Expires a pending sandbox deposit now instead of after its 30 minutes. */
  async expireDeposit(transactionId: string, options?: CallOptions): Promise<Deposit> {
    return (await this.#transport.request<Deposit>({ method: "POST", path: `/v1/sandbox/deposit/${id(transactionId)}/expire`, signal: options?.signal })).data;
  }
}
