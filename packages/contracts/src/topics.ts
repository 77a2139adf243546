// Event topics more than one package publishes or watches, named once. Topics are
// "<service>.v1.<event>"; the bus adds the deployment's subject prefix.

/** MerchantChanged: every change to a merchant (created, secret rotated, IPs, callback URL, status, sandbox, rate limit). Caches of merchant data drop the merchant on it. */
export const MERCHANT_CHANGED_TOPIC = "merchant.v1.merchant_changed";

/** CatalogChanged: every change to the bank catalog (banks, FAST, merchant limits, receiving accounts). Caches of catalog data drop everything on it. */
export const CATALOG_CHANGED_TOPIC = "bankcatalog.v1.catalog_changed";

/** TransferReturnChanged (payout): a return of an incoming transfer's money to its sender was completed. The deposit service marks the transfer returned. */
export const TRANSFER_RETURN_COMPLETED_TOPIC = "payout.v1.transfer_return_completed";

/** TransferReturnChanged (payout): a return failed. The deposit service puts the transfer back to unmatched (its money stays in suspense). */
export const TRANSFER_RETURN_FAILED_TOPIC = "payout.v1.transfer_return_failed";

/** TransferReturnRequested (deposit): an operator or a merchant's rule decided to pay an incoming transfer's money back. The payout service creates the return. */
export const TRANSFER_RETURN_REQUESTED_TOPIC = "deposit.v1.transfer_return_requested";
