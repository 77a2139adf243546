import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";

/**
 * The handlers for some RPCs of a service, as one route file provides them:
 * `Rpc<typeof DepositService, "createDeposit">`. A service's `routes/index.ts`
 * spreads them all into `router.service(...)`, which checks the whole set.
 */
export type Rpc<S extends DescService, K extends keyof ServiceImpl<S>> = Pick<ServiceImpl<S>, K>;
