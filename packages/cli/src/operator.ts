import { userInfo } from "node:os";
import { UsageError } from "./errors.js";

/**
 * Who decides, for the commands that record an operator's decision (transfer match, complete,
 * refuse, return; withheld-credit credit, dismiss): --actor, else PAYMENTS_OPERATOR, else the
 * OS user name. A decision is never recorded without a name.
 */
export function operatorName(actor: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  if (actor !== undefined) return actor;
  const fromEnv = env.PAYMENTS_OPERATOR?.trim();
  if (fromEnv) return fromEnv;
  let name = "";
  try {
    name = userInfo().username.trim();
  } catch {
    // No user name (some containers): the operator must say who they are.
  }
  if (!name) throw new UsageError("no operator name: pass --actor NAME or set PAYMENTS_OPERATOR.");
  return name;
}
