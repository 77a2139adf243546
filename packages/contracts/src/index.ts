import type { GenFile } from "@bufbuild/protobuf/codegenv2";
import { file_payments_merchant_v1_merchant } from "./gen/payments/merchant/v1/merchant_pb.js";
import { file_payments_merchant_v1_events } from "./gen/payments/merchant/v1/events_pb.js";
import { file_payments_bankcatalog_v1_bank_catalog } from "./gen/payments/bankcatalog/v1/bank_catalog_pb.js";
import { file_payments_bankcatalog_v1_events } from "./gen/payments/bankcatalog/v1/events_pb.js";
import { file_payments_deposit_v1_deposit } from "./gen/payments/deposit/v1/deposit_pb.js";
import { file_payments_deposit_v1_events } from "./gen/payments/deposit/v1/events_pb.js";
import { file_payments_payout_v1_payout } from "./gen/payments/payout/v1/payout_pb.js";
import { file_payments_payout_v1_events } from "./gen/payments/payout/v1/events_pb.js";
import { file_payments_callback_v1_callback } from "./gen/payments/callback/v1/callback_pb.js";
import { file_payments_operator_v1_operator } from "./gen/payments/operator/v1/operator_pb.js";
import { file_payments_operator_v1_events } from "./gen/payments/operator/v1/events_pb.js";

/** Every payments proto file, for server reflection and event decoding. */
export const paymentFiles: readonly GenFile[] = [
  file_payments_merchant_v1_merchant,
  file_payments_merchant_v1_events,
  file_payments_bankcatalog_v1_bank_catalog,
  file_payments_bankcatalog_v1_events,
  file_payments_deposit_v1_deposit,
  file_payments_deposit_v1_events,
  file_payments_payout_v1_payout,
  file_payments_payout_v1_events,
  file_payments_callback_v1_callback,
  file_payments_operator_v1_operator,
  file_payments_operator_v1_events,
];

export * from "./topics.js";
