import type { KeyObject } from "node:crypto";
import type { Knex } from "knex";
import type { Clock, Logger, Metrics } from "@payments/kit";
import type { AssertionIssuer } from "./identity/assertions.js";
import type { SessionLimits } from "./identity/sessions.js";
import type { SignInThrottle } from "./identity/sign-in-throttle.js";
import type { TotpSealer } from "./identity/totp.js";
import type { ConsoleConfig } from "./config.js";
import type { Mailer } from "./identity/mail/mailer.js";
import type { ServiceDirectory } from "./service-clients.js";

/** What routes, pages and the auth rules get: the console's database, settings and helpers. */
export interface ConsoleContext {
  config: ConsoleConfig;
  db: Knex;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  limits: SessionLimits;
  throttle: SignInThrottle;
  totp: TotpSealer;
  /** Signs operators' assertions; verifies admin assertions (the public half of the same key). */
  assertions: AssertionIssuer;
  /** The services' clients for a signed-in operator (pages that call services). */
  services: ServiceDirectory;
  /** The key itself, kept for the issuer; undefined when OPERATOR_ASSERTION_PRIVATE_KEY is unset. */
  privateKey: KeyObject | undefined;
  /** Where operators reach the console: the start of every link it hands out. */
  publicUrl: string;
  secureCookies: boolean;
  /** Sends one-time links by mail (SMTP_URL); undefined: they are shown on screen to whoever hands them over. */
  mailer: Mailer | undefined;
}

/** Milliseconds now, from the injected clock. */
export function nowMs(ctx: Pick<ConsoleContext, "clock">): number {
  return ctx.clock.now().getTime();
}
