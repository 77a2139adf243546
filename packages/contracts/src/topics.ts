// Event topics more than one package publishes or watches, named once. Topics are
// "<service>.v1.<event>"; the bus adds the deployment's subject prefix.

/** MerchantChanged: every change to a merchant (created, secret rotated, IPs, callback URL, status, sandbox, rate limit). Caches of merchant data drop the merchant on it. */
export const MERCHANT_CHANGED_TOPIC = "merchant.v1.merchant_changed";

/** CatalogChanged: every change to the bank catalog (banks, FAST, merchant limits, receiving accounts). Caches of catalog data drop everything on it. */
export const CATALOG_CHANGED_TOPIC = "bankcatalog.v1.catalog_changed";
