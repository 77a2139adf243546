import { timestampDate } from "@bufbuild/protobuf/wkt";
import { InvalidArgumentError, type Command } from "commander";
import {
  GetMerchantResponseSchema,
  LatePaymentRule,
  MerchantSchema,
  MerchantStatus,
  OverpaymentRule,
  SetAllowedIpsResponseSchema,
  SetCallbackUrlResponseSchema,
  SetDisplayNameResponseSchema,
  SetPaymentRulesResponseSchema,
  SetRateLimitResponseSchema,
  SetSandboxResponseSchema,
  SetStatusResponseSchema,
  UnderpaymentRule,
  type Merchant,
} from "@payments/contracts/merchant";
import { collectIps, parseBoolean, parseDurationSeconds, parseCount } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { formatTime, messageJson, yesNo, type Output } from "../output.js";

export function statusLabel(status: MerchantStatus): string {
  switch (status) {
    case MerchantStatus.ACTIVE:
      return "active";
    case MerchantStatus.DISABLED:
      return "disabled";
    default:
      return "unknown";
  }
}

export function rateLimitLabel(merchant: Pick<Merchant, "rateLimitPerSecond" | "rateLimitBurst">): string {
  const rps = merchant.rateLimitPerSecond;
  const burst = merchant.rateLimitBurst;
  if (rps === 0) return "off (no limit)";
  const rate = rps === undefined ? "default rate" : `${rps} requests/s`;
  const bursts = burst === undefined ? "default burst" : `burst ${burst}`;
  return rps === undefined && burst === undefined ? "gateway default" : `${rate}, ${bursts}`;
}

/**
 * The paid-amount rules by the names operators type (and the README uses), each with its
 * enum value; the first of each list is the service's default.
 */
export const UNDERPAYMENT_CHOICES = { review: UnderpaymentRule.REVIEW, complete: UnderpaymentRule.COMPLETE } as const;
export const OVERPAYMENT_CHOICES = { complete: OverpaymentRule.COMPLETE, review: OverpaymentRule.REVIEW } as const;
export const LATE_PAYMENT_CHOICES = { review: LatePaymentRule.REVIEW, complete: LatePaymentRule.COMPLETE, return: LatePaymentRule.RETURN } as const;

/** A parser for one rule option: a bad value is a usage error (exit 2, commander names the option) listing the allowed ones, before any call. */
export function ruleParser<V extends number>(choices: Readonly<Record<string, V>>): (value: string) => V {
  return (value: string) => {
    const rule = Object.hasOwn(choices, value.trim().toLowerCase()) ? choices[value.trim().toLowerCase()] : undefined;
    if (rule === undefined) throw new InvalidArgumentError(`expected one of: ${Object.keys(choices).join(", ")}.`);
    return rule;
  };
}

function ruleName(choices: Readonly<Record<string, number>>, value: number): string {
  return Object.entries(choices).find(([, v]) => v === value)?.[0] ?? "unknown";
}

/** The three rules on one line, e.g. `underpayment review, overpayment complete, late payment return`. */
export function paymentRulesLabel(merchant: Pick<Merchant, "underpayment" | "overpayment" | "latePayment">): string {
  return [
    `underpayment ${ruleName(UNDERPAYMENT_CHOICES, merchant.underpayment)}`,
    `overpayment ${ruleName(OVERPAYMENT_CHOICES, merchant.overpayment)}`,
    `late payment ${ruleName(LATE_PAYMENT_CHOICES, merchant.latePayment)}`,
  ].join(", ");
}

function ipsLabel(ips: readonly string[]): string {
  return ips.length > 0 ? ips.join(", ") : "none (reads and deposits from any IP; withdrawals refused)";
}

export function printMerchant(out: Output, merchant: Merchant): void {
  out.fields([
    ["id", merchant.id],
    ["name", merchant.name],
    // A merchant service older than display names answers none; its customers see the name.
    ["display name", merchant.displayName || merchant.name],
    ["status", statusLabel(merchant.status)],
    ["sandbox", yesNo(merchant.sandbox)],
    ["API key", merchant.apiKey],
    ["allowed IPs", ipsLabel(merchant.allowedIps)],
    ["callback URL", merchant.callbackUrl || "not set"],
    ["rate limit", rateLimitLabel(merchant)],
    ["payment rules", paymentRulesLabel(merchant)],
    ["created", formatTime(merchant.createdAt)],
    ["updated", formatTime(merchant.updatedAt)],
  ]);
  if (merchant.secrets.length > 0) {
    out.line();
    out.line("Secrets (newest first; values are never shown again):");
    out.table(
      ["ID", "CREATED", "EXPIRES", "VALID"],
      merchant.secrets.map((s) => [s.id, formatTime(s.createdAt), s.expiresAt ? formatTime(s.expiresAt) : "never (current)", yesNo(s.valid)]),
    );
  }
}

/** The merchant in a response, which a well-behaved service always sets. */
function required(merchant: Merchant | undefined): Merchant {
  if (!merchant) throw new Error("the service returned no merchant");
  return merchant;
}

/** The machine shape of a freshly shown secret: the three things a merchant must store. */
export function credentialsJson(merchant: Merchant, apiSecret: string): { merchantId: string; apiKey: string; apiSecret: string } {
  return { merchantId: merchant.id, apiKey: merchant.apiKey, apiSecret };
}

/** `--grace` of rotate-webhook-secret: a duration, at most the service's 30 days, refused (exit 2) before any call. */
export function parseWebhookGrace(value: string): number {
  const seconds = parseDurationSeconds(value);
  if (seconds > WEBHOOK_GRACE_MAX_SECONDS) throw new InvalidArgumentError("the grace period is at most 30d.");
  return seconds;
}

const WEBHOOK_GRACE_MAX_SECONDS = 30 * 86_400;

export function printWebhookSecret(out: Output, webhookSecret: string): void {
  out.line();
  out.line(`Webhook secret: ${webhookSecret}`);
  out.line("It verifies the webhook-signature header of callbacks (Standard Webhooks). Shown only once (`merchant rotate-webhook-secret` issues a new one).");
}

export function printSecret(out: Output, apiSecret: string): void {
  out.line();
  out.line(`API secret: ${apiSecret}`);
  out.line("The API secret is shown only once: store it now. It cannot be retrieved later (`merchant rotate-secret` issues a new one).");
}

export function registerMerchantCommands(program: Command, ctx: CommandContext): void {
  const merchant = program.command("merchant").description("create and manage merchants: credentials, display name, allowed IPs, callback, status, rate limit");

  merchant
    .command("create")
    .description("create an active merchant with a new API key and secret (the secret is shown once)")
    .requiredOption("--name <name>", "merchant name")
    .option("--display-name <name>", "the name its customers see on the checkout page, 1 to 100 characters (default: --name)")
    .option("--ip <ip-or-cidr>", "allowed caller IP or CIDR (IPv4/IPv6); repeat or comma-separate for several", collectIps)
    .option("--callback-url <url>", "where status callbacks are sent (https, or http for localhost in development)")
    .option("--sandbox", "sandbox merchant: test money and simulated banks")
    .addHelpText("after", "\nWith --json, prints exactly one object: {\"merchantId\",\"apiKey\",\"apiSecret\",\"webhookSecret\"}.")
    .action(async (opts: { name: string; displayName?: string; ip?: string[]; callbackUrl?: string; sandbox?: boolean }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.createMerchant({
        name: opts.name,
        displayName: opts.displayName ?? "",
        allowedIps: opts.ip ?? [],
        callbackUrl: opts.callbackUrl ?? "",
        sandbox: opts.sandbox === true,
      });
      const created = required(res.merchant);
      if (out.json) return out.data({ ...credentialsJson(created, res.apiSecret), webhookSecret: res.webhookSecret });
      out.line("Merchant created.");
      printMerchant(out, created);
      printSecret(out, res.apiSecret);
      printWebhookSecret(out, res.webhookSecret);
    });

  merchant
    .command("get")
    .alias("show")
    .description("show one merchant (never its secrets)")
    .argument("<id>", "merchant id")
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.getMerchant({ merchantId: id });
      if (out.json) return out.message(GetMerchantResponseSchema, res);
      printMerchant(out, required(res.merchant));
    });

  merchant
    .command("list")
    .description("list every merchant, oldest first")
    .action(async (_opts: object, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const all: Merchant[] = [];
      let pageToken = "";
      do {
        const page = await merchants.listMerchants({ pageSize: 100, pageToken });
        all.push(...page.merchants);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      if (out.json) return out.data({ merchants: all.map((m) => messageJson(MerchantSchema, m)) });
      out.table(
        ["ID", "NAME", "STATUS", "SANDBOX", "API KEY", "ALLOWED IPS", "UNDER", "OVER", "LATE", "CREATED"],
        all.map((m) => [
          m.id,
          m.name,
          statusLabel(m.status),
          yesNo(m.sandbox),
          m.apiKey,
          m.allowedIps.join(",") || "-",
          ruleName(UNDERPAYMENT_CHOICES, m.underpayment),
          ruleName(OVERPAYMENT_CHOICES, m.overpayment),
          ruleName(LATE_PAYMENT_CHOICES, m.latePayment),
          formatTime(m.createdAt),
        ]),
        "No merchants yet. Create one with `pnpm cli merchant create --name NAME`.",
      );
    });

  merchant
    .command("rotate-secret")
    .description("issue a new current secret; older secrets keep working for the grace period (shown once)")
    .argument("<id>", "merchant id")
    .option("--grace <duration>", "how long rotated-out secrets keep working, e.g. 24h, 30m, 0 (default: the service's, 24h)", parseDurationSeconds)
    .addHelpText("after", "\nWith --json, prints exactly one object: {\"merchantId\",\"apiKey\",\"apiSecret\"}.")
    .action(async (id: string, opts: { grace?: number }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.rotateSecret({ merchantId: id, gracePeriodSeconds: opts.grace });
      const rotated = required(res.merchant);
      if (out.json) return out.data(credentialsJson(rotated, res.apiSecret));
      out.line(`New secret issued for ${rotated.id} (API key ${rotated.apiKey}).`);
      const expiring = rotated.secrets.filter((s) => s.valid && s.expiresAt);
      for (const s of expiring) out.line(`Previous secret ${s.id} keeps working until ${formatTime(s.expiresAt)}.`);
      printSecret(out, res.apiSecret);
    });

  merchant
    .command("rotate-webhook-secret")
    .description("issue a new webhook secret (Standard Webhooks, whsec_…) for callbacks; during the grace period callbacks carry both signatures (shown once)")
    .argument("<id>", "merchant id")
    .option("--grace <duration>", "how long the old webhook secret still signs callbacks, e.g. 24h, 30m; 0 ends it now (default: the service's, 24h)", parseWebhookGrace)
    .addHelpText("after", "\nWith --json, prints exactly one object: {\"merchantId\",\"webhookSecret\",\"previousValidUntil\"} (previousValidUntil: ISO time, or null when no older secret still signs).")
    .action(async (id: string, opts: { grace?: number }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.rotateWebhookSecret({ merchantId: id, gracePeriodSeconds: opts.grace });
      const rotated = required(res.merchant);
      const previous = res.webhookSecrets.filter((s) => s.valid && s.expiresAt);
      const until = previous.map((s) => timestampDate(s.expiresAt!)).sort((a, b) => b.getTime() - a.getTime())[0];
      if (out.json) return out.data({ merchantId: rotated.id, webhookSecret: res.webhookSecret, previousValidUntil: until?.toISOString() ?? null });
      out.line(`New webhook secret issued for ${rotated.id}.`);
      for (const s of previous) out.line(`Previous webhook secret ${s.id} still signs callbacks (a second v1 signature) until ${formatTime(s.expiresAt)}.`);
      printWebhookSecret(out, res.webhookSecret);
    });

  merchant
    .command("set-ips")
    .description("replace the allowed IPs/CIDRs; without --ip the list is cleared")
    .argument("<id>", "merchant id")
    .option("--ip <ip-or-cidr>", "allowed caller IP or CIDR; repeat or comma-separate for several", collectIps)
    .addHelpText("after", "\nAn empty list lets reads and deposits come from any IP and refuses withdrawals.")
    .action(async (id: string, opts: { ip?: string[] }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.setAllowedIps({ merchantId: id, allowedIps: opts.ip ?? [] });
      if (out.json) return out.message(SetAllowedIpsResponseSchema, res);
      const updated = required(res.merchant);
      out.line(`Allowed IPs of ${updated.id}: ${ipsLabel(updated.allowedIps)}`);
    });

  merchant
    .command("set-callback")
    .description("set the callback URL, or clear it with --clear")
    .argument("<id>", "merchant id")
    .argument("[url]", "https URL (http allowed for localhost in development)")
    .option("--clear", "remove the callback URL")
    .action(async (id: string, url: string | undefined, opts: { clear?: boolean }, cmd: Command) => {
      if (opts.clear && url !== undefined) throw new UsageError("give either a URL or --clear, not both");
      if (!opts.clear && (url === undefined || url.trim() === "")) throw new UsageError("give the callback URL, or --clear to remove it");
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.setCallbackUrl({ merchantId: id, callbackUrl: opts.clear ? "" : (url ?? "") });
      if (out.json) return out.message(SetCallbackUrlResponseSchema, res);
      const updated = required(res.merchant);
      out.line(updated.callbackUrl ? `Callback URL of ${updated.id}: ${updated.callbackUrl}` : `Callback URL of ${updated.id} cleared.`);
    });

  merchant
    .command("set-display-name")
    .description("set the name the merchant's customers see on the checkout page, or go back to its name with --clear (or an empty name)")
    .argument("<id>", "merchant id")
    .argument("[name]", "1 to 100 characters, e.g. \"Örnek Mağaza\"")
    .option("--clear", "show the merchant's name again")
    .action(async (id: string, name: string | undefined, opts: { clear?: boolean }, cmd: Command) => {
      if (opts.clear && name !== undefined && name.trim() !== "") throw new UsageError("give either a display name or --clear, not both");
      if (!opts.clear && name === undefined) throw new UsageError("give the display name, or --clear (or \"\") to show the merchant's name again");
      const { out, merchants } = ctx.session(cmd);
      // The service takes an empty display name as "none": the merchant's name is shown.
      const res = await merchants.setDisplayName({ merchantId: id, displayName: opts.clear ? "" : (name ?? "") });
      if (out.json) return out.message(SetDisplayNameResponseSchema, res);
      const updated = required(res.merchant);
      out.line(
        updated.displayName === updated.name
          ? `Customers of ${updated.id} see its name on the checkout page: ${updated.name}`
          : `Display name of ${updated.id}: ${updated.displayName}`,
      );
    });

  for (const [name, status, description] of [
    ["disable", MerchantStatus.DISABLED, "disable a merchant: its API key is refused until enabled again"],
    ["enable", MerchantStatus.ACTIVE, "enable a disabled merchant"],
  ] as const) {
    merchant
      .command(name)
      .description(description)
      .argument("<id>", "merchant id")
      .action(async (id: string, _opts: object, cmd: Command) => {
        const { out, merchants } = ctx.session(cmd);
        const res = await merchants.setStatus({ merchantId: id, status });
        if (out.json) return out.message(SetStatusResponseSchema, res);
        const updated = required(res.merchant);
        out.line(`Merchant ${updated.id} is now ${statusLabel(updated.status)}.`);
      });
  }

  merchant
    .command("set-sandbox")
    .description("mark a merchant as sandbox (true) or live (false)")
    .argument("<id>", "merchant id")
    .argument("<sandbox>", "true or false", parseBoolean)
    .action(async (id: string, sandbox: boolean, _opts: object, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.setSandbox({ merchantId: id, sandbox });
      if (out.json) return out.message(SetSandboxResponseSchema, res);
      const updated = required(res.merchant);
      out.line(`Merchant ${updated.id} is now ${updated.sandbox ? "a sandbox merchant" : "live"}.`);
    });

  merchant
    .command("set-rate-limit")
    .description("set the request rate limit; an option left out falls back to the gateway default")
    .argument("<id>", "merchant id")
    .option("--rps <n>", "requests per second (0 = no limit)", parseCount)
    .option("--burst <n>", "burst size", parseCount)
    .addHelpText("after", "\nWith neither option the merchant goes back to the gateway defaults (100 requests/s, bursts of 200).")
    .action(async (id: string, opts: { rps?: number; burst?: number }, cmd: Command) => {
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.setRateLimit({ merchantId: id, requestsPerSecond: opts.rps, burst: opts.burst });
      if (out.json) return out.message(SetRateLimitResponseSchema, res);
      const updated = required(res.merchant);
      out.line(`Rate limit of ${updated.id}: ${rateLimitLabel(updated)}.`);
    });

  merchant
    .command("set-payment-rules")
    .description("set what the deposit service does with underpaid, overpaid and late transfers; rules left out keep their value")
    .argument("<id>", "merchant id")
    .option("--underpayment <rule>", "review (default) or complete: a transfer below the requested amount", ruleParser(UNDERPAYMENT_CHOICES))
    .option("--overpayment <rule>", "complete (default) or review: a transfer above the requested amount", ruleParser(OVERPAYMENT_CHOICES))
    .option("--late-payment <rule>", "review (default), complete or return: a transfer for a deposit that has expired", ruleParser(LATE_PAYMENT_CHOICES))
    .addHelpText("after", "\nreview: the transfer waits in the review queue for an operator; complete: the deposit completes with the amount received; return: the money goes back to the sender.")
    .action(async (id: string, opts: { underpayment?: UnderpaymentRule; overpayment?: OverpaymentRule; latePayment?: LatePaymentRule }, cmd: Command) => {
      if (opts.underpayment === undefined && opts.overpayment === undefined && opts.latePayment === undefined) {
        throw new UsageError("give at least one of --underpayment, --overpayment, --late-payment");
      }
      const { out, merchants } = ctx.session(cmd);
      const res = await merchants.setPaymentRules({ merchantId: id, underpayment: opts.underpayment, overpayment: opts.overpayment, latePayment: opts.latePayment });
      if (out.json) return out.message(SetPaymentRulesResponseSchema, res);
      const updated = required(res.merchant);
      out.line(`Payment rules of ${updated.id}: ${paymentRulesLabel(updated)}.`);
    });
}
