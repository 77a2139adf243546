import type { ConsoleContext } from "../context.js";
import type { ConsoleRoute } from "../route.js";
import { balancePages } from "./balances/index.js";
import { transferReturnPages } from "./transfer-returns/index.js";
import { withheldCreditPages } from "./withheld-credits/index.js";

/** The operators' money tasks that were the CLI's only: transfer returns, withheld credits, a merchant's balance and its adjustments. */
export function moneyPages(deps: ConsoleContext): ConsoleRoute[] {
  return [...transferReturnPages(deps), ...withheldCreditPages(deps), ...balancePages(deps)];
}
