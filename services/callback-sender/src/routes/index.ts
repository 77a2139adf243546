import type { ConnectRouter } from "@connectrpc/connect";
import { CallbackService } from "@payments/contracts/callback";
import type { CallbackContext } from "../context.js";
import { getEvent } from "./get-event.js";
import { listEvents } from "./list-events.js";
import { redeliverEvent } from "./redeliver-event.js";
import { redeliverFailedEvents } from "./redeliver-failed-events.js";
import { sendTestEvent } from "./send-test-event.js";

export function routes(router: ConnectRouter, ctx: CallbackContext): void {
  router.service(CallbackService, {
    ...getEvent(ctx),
    ...listEvents(ctx),
    ...redeliverEvent(ctx),
    ...redeliverFailedEvents(ctx),
    ...sendTestEvent(ctx),
  });
}
