import { fromBinary } from "@bufbuild/protobuf";
import { MerchantChangedSchema } from "./gen/payments/merchant/v1/events_pb.js";

/**
 * The merchants a MerchantChanged event (MERCHANT_CHANGED_TOPIC) is about, for caches keyed
 * by merchant id: none for a creation (nothing is kept about a merchant that did not exist:
 * failed loads are not kept); one without merchant_id counts as unreadable (throws), and a
 * cache drops everything.
 */
export function merchantsChangedBy(message: { data: Uint8Array }): string[] {
  const { merchantId, change } = fromBinary(MerchantChangedSchema, message.data);
  if (merchantId === "") throw new Error("a MerchantChanged event without merchant_id");
  return change === "created" ? [] : [merchantId];
}
