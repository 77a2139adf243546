import type { MerchantRole } from "@payments/access";
import type { MerchantHeader } from "./merchant-session.js";
import type { MerchantUser } from "../identity/merchant-users.js";
import type { ConsoleContext } from "../context.js";
import { html } from "../shared/html.js";
import { alert } from "../shared/layout.js";
import { seeOther } from "../shared/params.js";
import { common } from "../merchant/common/texts.js";
import { merchantPage, signedInMerchant } from "../merchant/merchant-call.js";
import type { ConsoleMiddleware } from "../state.js";

/**
 * A page of the merchant dashboard: nobody signed in (as a merchant user: an operator is nobody
 * here) goes to /merchant/sign-in; a role not in `roles` gets the 403 page, for a GET and a
 * replayed POST alike, before the handler (and the CSRF check) runs.
 */
export function requireMerchantUser(deps: ConsoleContext, options: { roles?: readonly MerchantRole[] | undefined; names: (user: MerchantUser) => Promise<MerchantHeader> }): ConsoleMiddleware {
  return async (ctx, next) => {
    const user = ctx.state.merchantUser;
    if (!user) return seeOther(ctx, "/merchant/sign-in");
    const merchant = await options.names(user);
    ctx.state.merchantName = merchant.name;
    // Nobody chose a mode yet: the dashboard opens on the merchant's own kind (a sandbox merchant has only sandbox money).
    if (!ctx.state.modeChosen && merchant.sandbox !== undefined) ctx.state.mode = merchant.sandbox ? "sandbox" : "live";
    if (options.roles && !options.roles.includes(user.role)) {
      const who = signedInMerchant(deps, ctx);
      merchantPage(ctx, who, { title: common(who.lang, "error.title"), body: alert(common(who.lang, "error.forbidden")) ?? html`` }, 403);
      return;
    }
    await next();
  };
}
