import type { ConsoleContext } from "../../context.js";
import type { ConsoleRoute } from "../../route.js";

/** The Team page (being written). */
export function merchantTeamPages(deps: ConsoleContext): ConsoleRoute[] {
  void deps;
  return [];
}
