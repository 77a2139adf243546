import { CallbackService } from "@payments/contracts/callback";
import { defineAccess, type ServiceAccess } from "@payments/kit";

/**
 * Who may call each RPC (README, "Operators: roles and approvals"): the gateway reads and
 * redelivers a merchant's own events without an operator; support redelivers for anyone.
 */
export function callbackAccess(): ServiceAccess[] {
  return [
    defineAccess(CallbackService, {
      getEvent: { role: "viewer", system: true },
      listEvents: { role: "viewer", system: true },
      redeliverEvent: { role: "support", system: true },
      redeliverFailedEvents: { role: "support" },
      sendTestEvent: { role: "support" },
    }),
  ];
}
