import { ID_MAX, PROCESS_ID_MAX, TEXT_MAX } from "../routes/route.js";

/** The end of every path id's description. */
export const NOT_AN_ID = `Ids are at most ${ID_MAX} characters; any other string is simply not found (404).`;

/*
 * What the request fields are, and the limits the services judge beyond the schema: the
 * lengths and characters are in the schema itself (route.ts), these say the rest.
 */
export const TEXT = `trimmed, then 1 to ${TEXT_MAX} characters (counted in UTF-16 code units: a character outside the Basic Multilingual Plane, such as an emoji, counts 2), none of them a control character or bidirectional override`;
export const PROCESS_ID_RULE = `1 to ${PROCESS_ID_MAX} characters, kept exactly as sent: no whitespace at either end, no control characters or bidirectional overrides`;
export const CURRENCY =
  "Currency code (any case, surrounding spaces ignored); default `TRY`. One of the currencies this gateway is configured for (by default only TRY): another is 400 VALIDATION_ERROR naming the currencies, checked by the service because the list is configuration.";
