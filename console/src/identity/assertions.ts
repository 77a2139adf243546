import type { KeyObject } from "node:crypto";
import { createPublicKey } from "node:crypto";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { type Clock } from "@payments/kit";
import {
  AssertionError,
  audienceOfService,
  createAssertionSigner,
  isMerchantUser,
  isMutating,
  OPERATOR_ASSERTION_HEADER,
  OPERATOR_SERVICE_HEADER,
  operatorAssertionInterceptor as kitAssertionInterceptor,
  verifyAssertion,
  withHeaders,
  type ActorIdentity,
  type AssertionSigner,
} from "@payments/access";
import { merchantIdentityOf, type MerchantUser } from "./merchant-users.js";
import { identityOf, type Operator } from "./operators.js";

/** The console's own name as an audience: an assertion for it may use the admin API. */
export const CONSOLE_AUDIENCE = "console";

/** Every audience the console signs for: the five services, and itself. */
export const SERVICE_AUDIENCES = ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"] as const;
export const KNOWN_AUDIENCES: readonly string[] = [...SERVICE_AUDIENCES, CONSOLE_AUDIENCE];

/** Services every deployable serves (audit, approvals): the call itself does not say which service is meant. */
const SHARED_SERVICE_PREFIX = "payments.operator.v1.";

/** No OPERATOR_ASSERTION_PRIVATE_KEY: the console can sign nobody's calls. */
export class NoAssertionKeyError extends Error {
  constructor() {
    super("OPERATOR_ASSERTION_PRIVATE_KEY is not set: the console cannot sign operator assertions");
  }
}

/**
 * Signs, for a signed-in operator, the 60-second assertions of who acts (kind "human",
 * subject = email, role = the account's role now), and verifies the assertions that reach the
 * console's admin API, against the public half of the same key.
 */
export interface AssertionIssuer {
  /** A signer for this operator, one assertion per audience, each reused until shortly before it expires. */
  assertionsFor(operator: Pick<Operator, "email" | "displayName" | "role">): AssertionSigner;
  /**
   * A signer for a merchant's own user: the same 60-second assertions, naming the user's merchant
   * (`merchant_id`), to which the services scope every read and write of the call.
   */
  assertionsForMerchantUser(user: Pick<MerchantUser, "email" | "displayName" | "role" | "merchantId">): AssertionSigner;
  /** The identity in `token` when it is a valid assertion for `audience` (default: the console): an operator's or a merchant user's. */
  verify(token: string, audience?: string): Promise<ActorIdentity>;
}

export function createAssertionIssuer(privateKey: KeyObject | undefined, clock: Clock): AssertionIssuer {
  const publicKey = privateKey ? createPublicKey(privateKey) : undefined;
  return {
    assertionsFor(operator) {
      if (!privateKey) throw new NoAssertionKeyError();
      return createAssertionSigner(privateKey, identityOf(operator), { now: () => clock.now() });
    },
    assertionsForMerchantUser(user) {
      if (!privateKey) throw new NoAssertionKeyError();
      return createAssertionSigner(privateKey, merchantIdentityOf(user), { now: () => clock.now() });
    },
    async verify(token, audience = CONSOLE_AUDIENCE) {
      if (!publicKey) throw new NoAssertionKeyError();
      const identity = await verifyAssertion(publicKey, token, audience, clock.now());
      // The admin API and the CLI's sessions are operators' alone: a merchant user's assertion is no key to them.
      if (isMerchantUser(identity)) throw new AssertionError("a merchant user's assertion is not an operator's");
      return identity;
    },
  };
}

/**
 * The audience of a call to `typeName`: the service that owns it, or, for the shared operator
 * services (served by every service), the `audience` the client was made for. undefined for
 * what needs none (health, reflection).
 */
export function audienceOfCall(typeName: string, audience: string | undefined): string | undefined {
  if (typeName.startsWith(SHARED_SERVICE_PREFIX)) {
    if (!audience) throw new ConnectError(`${typeName} is served by every service: the client must name which one (an explicit audience)`, Code.Internal);
    return audience;
  }
  return audienceOfService(typeName);
}

/**
 * A Connect client interceptor that puts the operator's assertion on every call
 * (`x-operator-assertion`), for the service the call goes to. `audience` names the service for
 * `payments.operator.v1.*` calls (audit, approvals), which every service serves; such a call
 * without one is refused here rather than sent unsigned. The header work itself is the kit's
 * (which also names the service in `x-payments-service` for those calls), so the console, the
 * CLI and the services agree on it.
 */
export function operatorAssertionInterceptor(signer: AssertionSigner, options: { audience?: string } = {}): Interceptor {
  const inner = kitAssertionInterceptor(signer, options.audience);
  return (next) => {
    const signed = inner(next);
    return (req) => {
      audienceOfCall(req.service.typeName, options.audience);
      return signed(req);
    };
  };
}

/**
 * `transport` (one built elsewhere: the all-in-one's in-process one) with `signer`'s assertion on
 * every call, as operatorAssertionInterceptor puts it on a network client's: for the service the
 * call goes to (`audience` for the shared operator services), named in `x-payments-service` for
 * those, and one never used before for a call that changes anything.
 */
export function withAssertions(transport: Transport, signer: AssertionSigner, audience: string | undefined): Transport {
  return withHeaders(transport, async (method, header) => {
    const target = audienceOfCall(method.parent.typeName, audience);
    if (!target) return;
    header.set(OPERATOR_ASSERTION_HEADER, await signer.assertionFor(target, { fresh: isMutating(method) }));
    if (!audienceOfService(method.parent.typeName)) header.set(OPERATOR_SERVICE_HEADER, target);
  });
}
