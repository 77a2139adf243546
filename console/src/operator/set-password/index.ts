import type { ConsoleContext } from "../../context.js";
import type { ConsoleRoute } from "../../route.js";
import { setPasswordRoutes } from "../../identity/account-pages.js";
import { OPERATOR_PAGES } from "../sign-in/index.js";

/**
 * GET/POST /set-password?token=…: where an operator's one-time link (new account or reset) leads.
 * The link is used up by the successful submission only, in the same transaction that stores the
 * hash; every session of the account ends with it.
 */
export function setPasswordPages(deps: ConsoleContext): ConsoleRoute[] {
  return setPasswordRoutes(deps, OPERATOR_PAGES);
}
