import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, validationError, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { LATE_PAYMENT_TO_PROTO, OVERPAYMENT_TO_PROTO, UNDERPAYMENT_TO_PROTO } from "../merchant-message.js";
import { changeMerchant, type MerchantPatch } from "../store.js";

/**
 * An optional rule: unset keeps the stored one; a value must be one of the enum's named rules
 * (UNSPECIFIED and numbers the service does not know are refused, naming the allowed ones).
 */
function ruleInput<Name extends string>(toProto: Readonly<Record<Name, number>>, protoNames: string) {
  const byNumber = new Map<number, Name>(Object.entries(toProto).map(([name, value]) => [value as number, name as Name]));
  return z
    .number()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const name = byNumber.get(value);
      if (!name) {
        ctx.addIssue({ code: "custom", message: `must be ${protoNames}` });
        return z.NEVER;
      }
      return name;
    });
}

const setPaymentRulesInput = z.object({
  merchantId: merchantIdInput,
  underpayment: ruleInput(UNDERPAYMENT_TO_PROTO, "UNDERPAYMENT_RULE_REVIEW or UNDERPAYMENT_RULE_COMPLETE"),
  overpayment: ruleInput(OVERPAYMENT_TO_PROTO, "OVERPAYMENT_RULE_COMPLETE or OVERPAYMENT_RULE_REVIEW"),
  latePayment: ruleInput(LATE_PAYMENT_TO_PROTO, "LATE_PAYMENT_RULE_REVIEW, LATE_PAYMENT_RULE_COMPLETE or LATE_PAYMENT_RULE_RETURN"),
});

/**
 * Changes only the rules given, so an operator tightening one rule cannot reset another by
 * leaving it out. The MerchantChanged event (`payment_rules`) goes out with the change, in
 * the same transaction, so the deposit service's merchant cache drops the old rules.
 */
export function setPaymentRules(ctx: MerchantContext): Rpc<typeof MerchantService, "setPaymentRules"> {
  return {
    async setPaymentRules(req) {
      const input = parseRequest(setPaymentRulesInput, req);
      const patch: MerchantPatch = {};
      if (input.underpayment !== undefined) patch.underpayment = input.underpayment;
      if (input.overpayment !== undefined) patch.overpayment = input.overpayment;
      if (input.latePayment !== undefined) patch.late_payment = input.latePayment;
      // A call that changes nothing is a caller's mistake (a forgotten option), not a no-op to publish.
      if (Object.keys(patch).length === 0) throw validationError("underpayment", "underpayment, overpayment, late_payment: give at least one rule to set");
      const merchant = await changeMerchant(ctx, input.merchantId, "payment_rules", patch);
      return { merchant };
    },
  };
}
