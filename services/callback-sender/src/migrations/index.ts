import type { Migration } from "@payments/kit";
import { callbacksMigration } from "./20261122050000_callbacks.js";
import { callbackTraceMigration } from "./20261123000000_callback_trace.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [callbacksMigration, callbackTraceMigration];
