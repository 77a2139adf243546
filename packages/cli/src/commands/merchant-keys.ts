import { InvalidArgumentError, type Command } from "commander";
import { API_KEY_SCOPES, isApiKeyScope, type ApiKeyScope } from "@payments/access";
import { ApiKeySchema, type ApiKey } from "@payments/contracts/merchant";
import { parseDurationSeconds } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatTime, messageJson, yesNo, type Output } from "../output.js";

/** `--scope`: one or several of read, deposits, withdrawals (repeat it or comma-separate); a bad name is a usage error before any call. */
export function collectScopes(value: string, previous: readonly ApiKeyScope[] = []): ApiKeyScope[] {
  const added = value
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  const unknown = added.find((s) => !isApiKeyScope(s));
  if (unknown !== undefined || added.length === 0) throw new InvalidArgumentError(`expected one of: ${API_KEY_SCOPES.join(", ")}.`);
  return [...previous, ...(added as ApiKeyScope[])];
}

function keyName(key: ApiKey): string {
  return key.primary ? "primary" : key.label;
}

function statusOf(key: ApiKey): string {
  return key.revokedAt ? `revoked ${formatTime(key.revokedAt)}` : "active";
}

function printKey(out: Output, key: ApiKey): void {
  out.fields([
    ["API key", key.id],
    ["name", keyName(key)],
    ["scopes", key.scopes.join(", ")],
    ["trusted for automatic payouts", yesNo(key.trusted)],
    ["created", `${formatTime(key.createdAt)}${key.createdBy ? ` by ${key.createdBy}` : ""}`],
    ["status", `${statusOf(key)}${key.revokedBy ? ` by ${key.revokedBy}` : ""}`],
  ]);
  if (key.secrets.length === 0) return;
  out.line();
  out.line("Secrets (newest first; values are never shown again):");
  out.table(
    ["ID", "CREATED", "EXPIRES", "VALID"],
    key.secrets.map((s) => [s.id, formatTime(s.createdAt), s.expiresAt ? formatTime(s.expiresAt) : "never (current)", yesNo(s.valid)]),
  );
}

function required(key: ApiKey | undefined): ApiKey {
  if (!key) throw new Error("the service returned no API key");
  return key;
}

function printSecret(out: Output, apiSecret: string): void {
  out.line();
  out.line(`API secret: ${apiSecret}`);
  out.line("The API secret is shown only once: store it now. It cannot be retrieved later (`merchant key rotate` issues a new one).");
}

/**
 * `merchant key create|list|rotate|revoke|trust`: a merchant's API keys, each with its scopes
 * (read, deposits, withdrawals), its trusted mark for automatic payouts and its own secrets, as
 * an admin. `merchant` is the existing `merchant` command group.
 */
export function registerMerchantKeyCommands(merchant: Command, ctx: CommandContext): void {
  const key = merchant.command("key").description("the merchant's API keys: scopes, secrets, trust for automatic payouts (admin)");

  key
    .command("create")
    .description("issue another API key with the scopes given and its first secret (shown once)")
    .requiredOption("--merchant <id>", "the merchant id")
    .requiredOption("--label <name>", "what the merchant calls it, 1 to 100 characters (\"payouts server\")")
    .requiredOption("--scope <scope>", `${API_KEY_SCOPES.join(" | ")}; repeat or comma-separate for several`, collectScopes)
    .addHelpText("after", "\nWith --json, prints exactly one object: {\"merchantId\",\"apiKey\",\"apiSecret\",\"label\",\"scopes\"}.")
    .action(async (opts: { merchant: string; label: string; scope: ApiKeyScope[] }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.createApiKey({ merchantId: opts.merchant, label: opts.label, scopes: opts.scope });
      const made = required(res.key);
      if (out.json) return out.data({ merchantId: made.merchantId, apiKey: made.id, apiSecret: res.apiSecret, label: made.label, scopes: made.scopes });
      out.line(`API key created for ${made.merchantId}.`);
      printKey(out, made);
      printSecret(out, res.apiSecret);
    });

  key
    .command("list")
    .description("list the merchant's API keys: the primary first, revoked ones last (never a secret)")
    .requiredOption("--merchant <id>", "the merchant id")
    .action(async (opts: { merchant: string }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const { keys } = await merchants.listApiKeys({ merchantId: opts.merchant });
      if (out.json) return out.data({ keys: keys.map((k) => messageJson(ApiKeySchema, k)) });
      out.table(
        ["API KEY", "NAME", "SCOPES", "TRUSTED", "SECRETS", "CREATED", "STATUS"],
        keys.map((k) => [k.id, keyName(k), k.scopes.join(","), yesNo(k.trusted), String(k.secrets.filter((s) => s.valid).length), formatTime(k.createdAt), statusOf(k)]),
        "No API keys.",
      );
    });

  key
    .command("rotate")
    .description("issue a new current secret of one key (the primary unless --key); its older secrets keep working for the grace period (shown once)")
    .requiredOption("--merchant <id>", "the merchant id")
    .option("--key <pk_…>", "the API key (default: the merchant's primary key)")
    .option("--grace <duration>", "how long the key's rotated-out secrets keep working, e.g. 24h, 30m, 0 (default: the service's, 24h)", parseDurationSeconds)
    .addHelpText("after", "\nWith --json, prints exactly one object: {\"merchantId\",\"apiKey\",\"apiSecret\"}.")
    .action(async (opts: { merchant: string; key?: string; grace?: number }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.rotateSecret({ merchantId: opts.merchant, apiKey: opts.key ?? "", gracePeriodSeconds: opts.grace });
      const rotated = required(res.key);
      if (out.json) return out.data({ merchantId: rotated.merchantId, apiKey: rotated.id, apiSecret: res.apiSecret });
      out.line(`New secret issued for API key ${rotated.id} of ${rotated.merchantId}.`);
      for (const s of rotated.secrets.filter((s) => s.valid && s.expiresAt)) out.line(`Previous secret ${s.id} keeps working until ${formatTime(s.expiresAt)}.`);
      printSecret(out, res.apiSecret);
    });

  key
    .command("revoke")
    .description("end an API key now, with every secret of it (the primary key cannot be revoked: rotate its secret)")
    .requiredOption("--merchant <id>", "the merchant id")
    .requiredOption("--key <pk_…>", "the API key")
    .action(async (opts: { merchant: string; key: string }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const revoked = required((await merchants.revokeApiKey({ merchantId: opts.merchant, apiKey: opts.key })).key);
      if (out.json) return out.data(messageJson(ApiKeySchema, revoked));
      out.line(`API key ${revoked.id} of ${revoked.merchantId} is revoked: requests signed with it are refused.`);
    });

  key
    .command("trust")
    .description("trust a key that can withdraw for automatic payouts (its withdrawals skip the merchant's approval threshold), or stop with --off; audited")
    .requiredOption("--merchant <id>", "the merchant id")
    .requiredOption("--key <pk_…>", "the API key")
    .option("--off", "stop trusting it: its withdrawals above the threshold wait for approval again")
    .action(async (opts: { merchant: string; key: string; off?: boolean }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const changed = required((await merchants.setApiKeyTrusted({ merchantId: opts.merchant, apiKey: opts.key, trusted: opts.off !== true })).key);
      if (out.json) return out.data(messageJson(ApiKeySchema, changed));
      out.line(
        changed.trusted
          ? `API key ${changed.id} of ${changed.merchantId} is trusted for automatic payouts: its withdrawals no longer wait for the merchant's approval threshold.`
          : `API key ${changed.id} of ${changed.merchantId} is not trusted: its withdrawals above the merchant's approval threshold wait for approval.`,
      );
    });
}
