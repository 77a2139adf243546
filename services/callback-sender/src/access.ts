import { CallbackService } from "@payments/contracts/callback";
import { ANY_MERCHANT_ROLE, defineAccess, type ServiceAccess } from "@payments/access";

/**
 * Who may call each RPC (README, "Operators: roles and approvals"): the gateway reads and
 * redelivers a merchant's own events without an operator; support redelivers for anyone.
 */
export function callbackAccess(): ServiceAccess[] {
  return [
    defineAccess(CallbackService, {
      getEvent: { role: "viewer", system: true, merchant: { roles: ANY_MERCHANT_ROLE } },
      listEvents: { role: "viewer", system: true, merchant: { roles: ANY_MERCHANT_ROLE } },
      redeliverEvent: { role: "support", system: true, merchant: { roles: ["owner", "developer"] } },
      redeliverFailedEvents: { role: "support", merchant: { roles: ["owner", "developer"] } },
      sendTestEvent: { role: "support", merchant: { roles: ["owner", "developer"] } },
    }),
  ];
}
