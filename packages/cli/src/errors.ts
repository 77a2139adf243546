import { Code, ConnectError } from "@connectrpc/connect";
import { errorInfo } from "@payments/kit";

/** Bad input found after commander parsed the line (e.g. nothing to update): exit 2 like commander's own usage errors. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A service or the gateway could not be reached at all. */
export class UnreachableError extends Error {
  override readonly name = "UnreachableError";
  constructor(
    readonly url: string,
    readonly detail: string,
  ) {
    super(`cannot reach ${url} — is \`pnpm start\` running? (${detail})`);
  }
}

/** A command that ran but must still exit non-zero (for example an HTTP error from `request`). */
export class CommandFailed extends Error {
  override readonly name = "CommandFailed";
}

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** "NotFound" → "NOT_FOUND": the gRPC name, when a service sent no machine reason. */
function codeName(code: Code): string {
  // A code this build's enum does not name (a newer service) has no name: CODE_<n>.
  return ((Code[code] as string | undefined) ?? `CODE_${code}`).replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** The one stderr line for a failure and the exit code that goes with it. */
export function describeFailure(thrown: unknown): { line: string; exitCode: number } {
  // A client call wraps what its interceptors throw in a ConnectError; the cause is ours.
  const err = thrown instanceof ConnectError && thrown.cause instanceof Error && !(thrown.cause instanceof ConnectError) ? thrown.cause : thrown;
  if (err instanceof UsageError) return { line: `error: ${err.message}`, exitCode: EXIT_USAGE };
  if (err instanceof UnreachableError || err instanceof CommandFailed) return { line: `error: ${err.message}`, exitCode: EXIT_FAILURE };
  const info = errorInfo(thrown);
  let line = `error: ${info.reason ?? codeName(info.code)}: ${info.message}`;
  if (info.field) line += ` (field: ${info.field})`;
  if (info.details && Object.keys(info.details).length > 0) line += ` ${JSON.stringify(info.details)}`;
  if (info.code === Code.Unauthenticated) line += unauthenticatedHint(info.message);
  return { line, exitCode: EXIT_FAILURE };
}

/**
 * Three different refusals share UNAUTHENTICATED: the internal token (which the services ask of
 * every caller at the network's edge), the workload identity (which program calls) and the
 * operator's signed assertion (which they ask of whoever acts). The hint names what fixes the one
 * that was refused.
 */
function unauthenticatedHint(message: string): string {
  if (/internal API token/i.test(message)) return " — set INTERNAL_API_TOKEN to the token the services run with";
  if (/workload (identity|assertion)|trust bundle|trust domain/i.test(message)) {
    return (
      " — the CLI names itself with WORKLOAD_KEY (a workload key the services' WORKLOAD_TRUST_BUNDLE holds: `pnpm cli identity issue`), " +
      "or the all-in-one's key for this machine's CLI (<DATA_DIR>/workloads/cli.key, ./var unless DATA_DIR says otherwise)"
    );
  }
  return (
    " — the CLI signs as an operator with PAYMENTS_OPERATOR_TOKEN (`pnpm cli operator token`), OPERATOR_ASSERTION_PRIVATE_KEY, " +
    "or the all-in-one's local admin key (<DATA_DIR>/operator-admin.key, ./var unless DATA_DIR says otherwise): set one that the services' OPERATOR_ASSERTION_PUBLIC_KEY accepts"
  );
}
