import { CallbackService } from "@payments/contracts/callback";
import { ANY_API_KEY, ANY_MERCHANT_ROLE, defineAccess, type ServiceAccess } from "@payments/access";

/**
 * Who may call each RPC (README, "Operators: roles and approvals"): the gateway reads and
 * redelivers a merchant's own events for the merchant (any API key); support redelivers for anyone.
 */
export function callbackAccess(): ServiceAccess[] {
  return [
    defineAccess(CallbackService, {
      getEvent: { role: "viewer", apiKey: ANY_API_KEY, merchant: { roles: ANY_MERCHANT_ROLE } },
      listEvents: { role: "viewer", apiKey: ANY_API_KEY, merchant: { roles: ANY_MERCHANT_ROLE } },
      redeliverEvent: { role: "support", apiKey: ANY_API_KEY, merchant: { roles: ["owner", "developer"] } },
      redeliverFailedEvents: { role: "support", merchant: { roles: ["owner", "developer"] } },
      sendTestEvent: { role: "support", merchant: { roles: ["owner", "developer"] } },
    }),
  ];
}
