import { z } from "zod";
import { MERCHANT_ROLES } from "@payments/access";
import { checkMerchantFor, operatorInvitesMerchantUser, operatorResetsMerchantUser } from "../identity/merchant-team.js";
import { listMerchantUsers, publicMerchantUser } from "../identity/merchant-users.js";
import type { ConsoleContext } from "../context.js";
import { notFound } from "../errors.js";
import { ID_PATTERN } from "../shared/params.js";
import type { ConsoleRoute } from "../route.js";
import { apiRoute } from "./body.js";
import type { ConsoleContextKoa } from "../state.js";
import { actorOf, answerChange, auditedBody, mailedByActor } from "./operators.js";

const inviteSchema = z.object({
  email: z.string().min(3).max(254),
  displayName: z.string().max(200).optional(),
  role: z.enum(MERCHANT_ROLES),
});

const resetSchema = z.object({ clearTotp: z.boolean().optional() });

function userIdOf(ctx: ConsoleContextKoa): string {
  const id = (ctx.params as Record<string, string>).userId ?? "";
  if (!ID_PATTERN.test(id)) throw notFound("no such user in this team");
  return id;
}

function merchantIdOf(ctx: ConsoleContextKoa): string {
  const id = (ctx.params as Record<string, string>).merchantId ?? "";
  if (!ID_PATTERN.test(id)) throw notFound(`no merchant ${id}`);
  return id;
}

/**
 * The admin API's merchant users (the CLI's `merchant user invite|list|reset`): an admin's CLI
 * session or an admin assertion. Inviting and resetting wait for a second admin (202 with the
 * approval), who gets the user and their one-time link on approving (auth/merchant-team.ts);
 * a reset ends the user's sessions (`clearTotp` also turns their TOTP off). A user id that is
 * not of the merchant is 404; a merchant the merchant service does not show the caller is 404.
 */
export function merchantUserRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [
    apiRoute("POST", "/api/merchants/:merchantId/users", "admin", async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const input = await auditedBody(deps, ctx, "InviteMerchantUser", [merchantId], inviteSchema);
      await checkMerchantFor(deps, actorOf(ctx), merchantId);
      const outcome = await operatorInvitesMerchantUser(deps, actorOf(ctx), { merchantId, ...input });
      answerChange(ctx, outcome, true, await mailedByActor(deps, ctx, outcome, "create"));
    }),
    apiRoute("GET", "/api/merchants/:merchantId/users", "admin", async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      ctx.body = { users: (await listMerchantUsers(deps.db, merchantId, { includeDisabled: true })).map(publicMerchantUser) };
    }),
    apiRoute("POST", "/api/merchants/:merchantId/users/:userId/reset", "admin", async (ctx) => {
      const merchantId = merchantIdOf(ctx);
      const userId = userIdOf(ctx);
      const { clearTotp } = await auditedBody(deps, ctx, "ResetMerchantUser", [merchantId, userId], resetSchema);
      const outcome = await operatorResetsMerchantUser(deps, actorOf(ctx), merchantId, userId, { clearTotp: clearTotp === true });
      answerChange(ctx, outcome, false, await mailedByActor(deps, ctx, outcome, "reset"));
    }),
  ];
}
