import { DeliveryStatus } from "@payments/contracts/callback";
import { cursorField, decodeCursor, identifier, merchantScope, merchantScopeFields, pageLimit } from "@payments/kit";
import { z } from "zod";
import { deliveryStatusFromProto } from "./store.js";

/** The field schemas the callback RPCs share, parsed once with the kit's `parseRequest`. */

export const eventId = identifier(40);
export const merchantId = identifier(100);
/** merchant_id, required, or an operator's explicit all_merchants: the merchant, or undefined for every one. */
export const scope = z.object(merchantScopeFields).transform(merchantScope);
export const optionalTransactionId = z
  .string()
  .max(40, "must be at most 40 characters")
  .transform((v) => (v === "" ? undefined : v));
export const deliveryStatus = z
  .number()
  .refine((s) => s === (DeliveryStatus.UNSPECIFIED as number) || deliveryStatusFromProto(s) !== undefined, "is not a delivery status")
  .transform((s) => deliveryStatusFromProto(s));
export const limit = pageLimit(20, 100);
export const cursor = cursorField(decodeCursor);
