import type { ConsoleContext } from "../context.js";
import type { ConsoleRoute } from "../route.js";
import { operatorSearchPages } from "./search-page.js";
import { merchantUserPages } from "./merchant-users/index.js";
import { operatorAccountPages } from "./operators/index.js";

/** The people's pages: operator accounts, a merchant's dashboard users, and the one search box of both sides. */
export function peoplePages(deps: ConsoleContext): ConsoleRoute[] {
  return [...operatorAccountPages(deps), ...merchantUserPages(deps), ...operatorSearchPages(deps)];
}
