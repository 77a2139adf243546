export { startGateway, type RunningGateway, type StartGatewayOptions } from "./server.js";
export { gatewayConfigSchema, loadGatewayConfig, type GatewayConfig } from "./config.js";
export { createApp, type GatewayDeps } from "./app.js";
export { ApiError, mapServiceError, publicReasons } from "./errors.js";
export type { Route } from "./routes/route.js";
export type { GatewayState } from "./state.js";
export { CatalogCache, type AvailableBanksLookup, type CatalogCacheOptions } from "./catalog-cache.js";
