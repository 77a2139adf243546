import { fromBinary } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { DEPOSIT_EVENTS, DEPOSIT_STATUS_TOPICS, PAYOUT_EVENTS, topicStatus, WITHDRAWAL_STATUS_TOPICS } from "@payments/contracts";
import { DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { depositRecord, withdrawalRecord, type TransactionRecord } from "@payments/records";
import { CALLBACK_EVENT_TYPES, type CallbackEventType } from "@payments/signing";

/**
 * The status-change events the callback-sender turns into callbacks, and the callback body:
 * `{ id, type, createdAt, data }` with `data` the same transaction record the gateway
 * answers reads with (decisions.md, Callbacks).
 */

/** Every event type a merchant can receive: the list merchants' verifier package ships. */
export const EVENT_TYPES = CALLBACK_EVENT_TYPES;
export type EventType = CallbackEventType;

/** The subjects (under the bus prefix) the sender consumes; NATS 2.9 takes one filter per consumer, so one consumer each. */
export const CONSUMED_TOPICS = [
  { durable: "callback-sender-deposits", topic: DEPOSIT_EVENTS },
  { durable: "callback-sender-withdrawals", topic: PAYOUT_EVENTS },
] as const;

export interface CallbackBody {
  id: string;
  type: EventType;
  createdAt: string;
  data: TransactionRecord;
}

/** An event ready to be stored and delivered. */
export interface NewCallbackEvent {
  id: string;
  merchantId: string;
  type: EventType;
  transactionType: "deposit" | "withdrawal";
  transactionId: string;
  sequence: number;
  /** When the status changed, epoch ms. */
  createdAt: number;
  /** The exact JSON every attempt sends. */
  body: string;
}

/** Whether a topic carries a status change merchants receive callbacks for: every one of @payments/contracts' status topics. */
export function isCallbackTopic(topic: string): boolean {
  return topicStatus(DEPOSIT_STATUS_TOPICS, topic) !== undefined || topicStatus(WITHDRAWAL_STATUS_TOPICS, topic) !== undefined;
}

function body(id: string, type: EventType, createdAt: number, data: TransactionRecord): string {
  const callback: CallbackBody = { id, type, createdAt: new Date(createdAt).toISOString(), data };
  return JSON.stringify(callback);
}

/**
 * The callback of one status-change event, or undefined for a topic that is not one (other
 * events on the same subjects). Throws on an event that contradicts its topic or lacks what
 * every status change carries: that is a bug upstream, and the message is retried rather
 * than turned into a wrong callback.
 */
export function callbackEventOf(topic: string, data: Uint8Array, publicBaseUrl: string): NewCallbackEvent | undefined {
  const depositStatus = topicStatus(DEPOSIT_STATUS_TOPICS, topic);
  if (depositStatus) {
    const event = fromBinary(DepositStatusChangedSchema, data);
    if (!event.deposit || !event.occurredAt || event.eventId === "") throw new Error(`${topic}: the event lacks its id, deposit or time`);
    const record = depositRecord(event.deposit, publicBaseUrl);
    const type = `deposit.${depositStatus}` as EventType;
    if (record.status !== depositStatus) throw new Error(`${topic}: event ${event.eventId} carries a ${record.status} deposit`);
    const createdAt = timestampMs(event.occurredAt);
    return {
      id: event.eventId,
      merchantId: event.deposit.merchantId,
      type,
      transactionType: "deposit",
      transactionId: record.transactionId,
      sequence: record.sequence,
      createdAt,
      body: body(event.eventId, type, createdAt, record),
    };
  }
  const withdrawalStatus = topicStatus(WITHDRAWAL_STATUS_TOPICS, topic);
  if (withdrawalStatus) {
    const event = fromBinary(WithdrawalStatusChangedSchema, data);
    if (!event.withdrawal || !event.occurredAt || event.eventId === "") throw new Error(`${topic}: the event lacks its id, withdrawal or time`);
    const record = withdrawalRecord(event.withdrawal);
    const type = `withdrawal.${withdrawalStatus}` as EventType;
    if (record.status !== withdrawalStatus) throw new Error(`${topic}: event ${event.eventId} carries a ${record.status} withdrawal`);
    const createdAt = timestampMs(event.occurredAt);
    return {
      id: event.eventId,
      merchantId: event.withdrawal.merchantId,
      type,
      transactionType: "withdrawal",
      transactionId: record.transactionId,
      sequence: record.sequence,
      createdAt,
      body: body(event.eventId, type, createdAt, record),
    };
  }
  return undefined;
}
