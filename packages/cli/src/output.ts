import { ScalarType, toJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { formatMajor } from "@payments/kit";
import type { Io } from "./io.js";

/** "150.50 TRY": an amount in the smallest unit, written in the currency's main unit (the kit's, exact). */
export { formatMajor };

const INT64_TYPES = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

/** Proto JSON writes 64-bit integers as strings; amounts are safe integers, so scripts get numbers. */
function int64Value(value: JsonValue): JsonValue {
  if (typeof value !== "string") return value;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fieldValue(field: DescField, value: JsonValue): JsonValue {
  switch (field.fieldKind) {
    case "scalar":
      return INT64_TYPES.has(field.scalar) ? int64Value(value) : value;
    case "message":
      if (field.message.typeName === "google.protobuf.Timestamp") return isoTimestamp(value);
      return isObject(value) ? plainFields(field.message, value) : value;
    case "list":
      if (!Array.isArray(value)) return value;
      if (field.listKind === "scalar" && INT64_TYPES.has(field.scalar)) return value.map(int64Value);
      if (field.listKind === "message") {
        const element = field.message;
        return value.map((item) => (isObject(item) ? plainFields(element, item) : item));
      }
      return value;
    case "map":
      if (!isObject(value)) return value;
      if (field.mapKind === "scalar" && INT64_TYPES.has(field.scalar)) {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, int64Value(v)]));
      }
      if (field.mapKind === "message") {
        const element = field.message;
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObject(v) ? plainFields(element, v) : v]));
      }
      return value;
    default:
      return value;
  }
}

/**
 * Proto JSON drops a Timestamp's fraction when it is zero ("…:30Z"); every other time has three
 * digits ("…:30.123Z"). One shape always, as toISOString writes it, for whoever parses --json.
 */
function isoTimestamp(value: JsonValue): JsonValue {
  return typeof value === "string" ? value.replace(/(T\d\d:\d\d:\d\d)Z$/, "$1.000Z") : value;
}

function plainFields(schema: DescMessage, json: JsonObject): JsonObject {
  // Well-known types (Timestamp, …) already have their own JSON form, e.g. an ISO string.
  if (schema.typeName.startsWith("google.protobuf.")) return json;
  const result: JsonObject = { ...json };
  for (const field of schema.fields) {
    const value = json[field.jsonName];
    if (value !== undefined) result[field.jsonName] = fieldValue(field, value);
  }
  return result;
}

/**
 * A response message as plain JSON: proto JSON names, defaults included (so `sandbox: false`
 * and `allowedIps: []` are present), timestamps as ISO strings, 64-bit integers as numbers.
 */
export function messageJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonObject {
  const json = toJson(schema, message, { alwaysEmitImplicit: true });
  return isObject(json) ? plainFields(schema, json) : {};
}

/** Stringifies plain values, writing any bigint as a number when it is safe to. */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== "bigint") return v;
    return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  });
}

export function formatTime(timestamp: Timestamp | undefined): string {
  return timestamp ? timestampDate(timestamp).toISOString() : "—";
}

/** How many decimals a currency's smallest unit has (2 for TRY; 0 for JPY); 2 when unknown. */
/** "15050 kuruş (150.50 TRY)": the integer operators type, and what it means. */
export function formatKurus(amount: bigint): string {
  return `${amount} kuruş (${formatMajor(amount, "TRY")})`;
}

/** Like formatKurus for any currency: "15050 kuruş (150.50 TRY)", "1999 (19.99 EUR)". */
export function formatMoney(amount: bigint, currency = "TRY"): string {
  const code = currency || "TRY";
  return code === "TRY" ? formatKurus(amount) : `${amount} (${formatMajor(amount, code)})`;
}

/** A change of a balance: "+15050 kuruş (+150.50 TRY)", "-500 kuruş (-5.00 TRY)", "0 kuruş (0.00 TRY)". */
export function formatSignedMoney(amount: bigint, currency = "TRY"): string {
  if (amount <= 0n) return formatMoney(amount, currency);
  const code = currency || "TRY";
  return code === "TRY" ? `+${amount} kuruş (+${formatMajor(amount, code)})` : `+${amount} (+${formatMajor(amount, code)})`;
}

export function yesNo(value: boolean): string {
  return value ? "yes" : "no";
}

/** Lays rows out in aligned columns; the last column is not padded. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** Label/value pairs, labels aligned. */
export function formatFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`.trimEnd()).join("\n") + "\n";
}

/** What a command prints: one JSON document with --json, readable text otherwise. */
export class Output {
  constructor(
    private readonly io: Io,
    readonly json: boolean,
  ) {}

  /** Exactly one JSON document on one line (plain values; bigint → number). */
  data(value: unknown): void {
    this.io.stdout.write(`${stringifyJson(value)}\n`);
  }

  message<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): void {
    this.data(messageJson(schema, message));
  }

  line(text = ""): void {
    this.io.stdout.write(`${text}\n`);
  }

  fields(fields: readonly (readonly [string, string])[]): void {
    this.io.stdout.write(formatFields(fields));
  }

  table(headers: readonly string[], rows: readonly (readonly string[])[], empty = "(none)"): void {
    this.io.stdout.write(rows.length === 0 ? `${empty}\n` : formatTable(headers, rows));
  }
}
