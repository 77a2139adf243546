import { Code, ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import { MerchantService } from "@payments/contracts/merchant";
import { createAssertionSigner, MERCHANT_ROLES } from "@payments/access";
import { inviteMerchantUser, resetMerchantUser } from "../auth/merchant-team.js";
import { listMerchantUsers, publicMerchantUser } from "../auth/merchant-users.js";
import type { ConsoleContext } from "../context.js";
import { ConsoleError, notFound } from "../errors.js";
import { ID_PATTERN } from "../pages/operator-call.js";
import type { ConsoleRoute } from "../route.js";
import type { ConsoleContextKoa } from "../state.js";
import { jsonBody } from "./body.js";

const inviteSchema = z.object({
  email: z.string().min(3).max(254),
  displayName: z.string().max(200).optional(),
  role: z.enum(MERCHANT_ROLES),
});

const resetSchema = z.object({ clearTotp: z.boolean().optional() });

function actorOf(ctx: ConsoleContextKoa) {
  const actor = ctx.state.actor;
  if (!actor) throw new ConsoleError(401, "UNAUTHENTICATED", "no admin");
  return actor;
}

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
 * The merchant exists, as the merchant service tells the calling operator (their own
 * assertion): 404 when it does not, 503 when the service does not answer.
 */
async function checkMerchant(deps: ConsoleContext, ctx: ConsoleContextKoa, merchantId: string): Promise<void> {
  if (!deps.privateKey) throw new ConsoleError(503, "NO_ASSERTION_KEY", "the console cannot sign assertions");
  const signer = createAssertionSigner(deps.privateKey, actorOf(ctx), { now: () => deps.clock.now() });
  try {
    await deps.services.client(MerchantService, signer).getMerchant({ merchantId });
  } catch (err) {
    const code = err instanceof ConnectError ? err.code : undefined;
    if (code === Code.NotFound) throw notFound(`no merchant ${merchantId}`);
    if (code === Code.PermissionDenied) throw new ConsoleError(403, "FORBIDDEN", "the merchant service refused to show this merchant");
    deps.logger.warn({ err, merchant: merchantId }, "merchant check failed");
    throw new ConsoleError(503, "UNAVAILABLE", "the merchant service does not answer");
  }
}

/**
 * The admin API's merchant users (the CLI's `merchant user invite|list|reset`): an admin's CLI
 * session or an admin assertion. Inviting and resetting answer the user and their one-time link,
 * once; a reset ends the user's sessions (`clearTotp` also turns their TOTP off). A user id that
 * is not of the merchant is 404.
 */
export function merchantUserRoutes(deps: ConsoleContext): ConsoleRoute[] {
  return [
    {
      method: "POST",
      path: "/api/merchants/:merchantId/users",
      access: "admin",
      handler: async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        const input = jsonBody(ctx, inviteSchema);
        await checkMerchant(deps, ctx, merchantId);
        const { user, link } = await inviteMerchantUser(deps, actorOf(ctx), { merchantId, ...input });
        ctx.status = 201;
        ctx.body = { status: "done", user: publicMerchantUser(user), link: { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() } };
      },
    },
    {
      method: "GET",
      path: "/api/merchants/:merchantId/users",
      access: "admin",
      handler: async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        ctx.body = { users: (await listMerchantUsers(deps.db, merchantId, { includeDisabled: true })).map(publicMerchantUser) };
      },
    },
    {
      method: "POST",
      path: "/api/merchants/:merchantId/users/:userId/reset",
      access: "admin",
      handler: async (ctx) => {
        const merchantId = merchantIdOf(ctx);
        const userId = userIdOf(ctx);
        const { clearTotp } = jsonBody(ctx, resetSchema);
        const { user, link } = await resetMerchantUser(deps, actorOf(ctx), merchantId, userId, { clearTotp: clearTotp === true });
        ctx.body = { status: "done", user: publicMerchantUser(user), link: { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() } };
      },
    },
  ];
}
