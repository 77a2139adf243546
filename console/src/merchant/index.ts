import { merchantSearchPages } from "./search-page.js";
import type { ConsoleContext } from "../context.js";
import type { ConsoleRoute } from "../route.js";
import { merchantSignInPages } from "./sign-in/index.js";
import { merchantTeamPages } from "./team/index.js";
import { merchantTotpPages } from "./totp/index.js";
import { merchantHomePages } from "./home/index.js";
import { merchantPaymentPages } from "./payments/index.js";
import { merchantMoneyPages } from "./money/index.js";
import { merchantDeveloperPages } from "./developers/index.js";

/**
 * The merchant dashboard's areas (`/merchant/...`, access `merchant` or `merchant-public`); a new
 * area adds its `merchant/<area>/index.ts` factory here. app.ts serves them when CONSOLE_AUDIENCE
 * is `merchants` or `both`.
 */
export function merchantRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [...merchantSignInPages(deps), ...merchantHomePages(deps), ...merchantPaymentPages(deps), ...merchantTeamPages(deps), ...merchantTotpPages(deps), ...merchantMoneyPages(deps), ...merchantDeveloperPages(deps), ...merchantSearchPages(deps)];
}
