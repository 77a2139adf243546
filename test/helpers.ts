import { signedHeaders } from "@payments/signing";
import { checkOpenApiResponse } from "./openapi-check.js";

export interface Credentials {
  apiKey: string;
  apiSecret: string;
}

/** A merchant's signed request to the gateway, as a merchant's own code would send it. */
export async function signedFetch(
  baseUrl: string,
  credentials: Credentials,
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const raw = body === undefined ? "" : JSON.stringify(body);
  const headers: Record<string, string> = {
    ...signedHeaders(credentials, { method, path, body: raw }),
    ...(raw ? { "content-type": "application/json" } : {}),
    ...extraHeaders,
  };
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: raw || undefined });
  const json = (await res.json()) as Record<string, unknown>;
  // Every answer of a documented route must be one the OpenAPI document describes.
  checkOpenApiResponse(method, path, res.status, json);
  return { status: res.status, headers: res.headers, json };
}

export interface BankEntry {
  _id: string;
  name: string;
  code: string;
  minAmount: number;
  maxAmount: number;
  logo?: string;
}

/** The invariants api.md states for GET /v1/available-banks. */
export function bankListProblems(data: unknown): string[] {
  const problems: string[] = [];
  const banks = (data as { banks?: BankEntry[] } | null | undefined)?.banks;
  if (!Array.isArray(banks) || banks.length === 0) return ["data.banks is not a non-empty array"];
  const fast = banks.filter((b) => b._id === "FAST");
  if (fast.length > 1) problems.push("more than one FAST entry");
  for (const b of banks) {
    if (typeof b._id !== "string" || typeof b.name !== "string" || typeof b.code !== "string") problems.push(`bad strings in ${JSON.stringify(b)}`);
    if (!Number.isSafeInteger(b.minAmount) || !Number.isSafeInteger(b.maxAmount) || b.minAmount > b.maxAmount) problems.push(`bad limits in ${b._id}`);
    if (b._id === "FAST") {
      if (b.code !== "FAST") problems.push("FAST entry code is not FAST");
      if ("logo" in b) problems.push("FAST entry has a logo");
    } else if (typeof b.logo !== "string" || !/^https?:\/\//.test(b.logo)) {
      problems.push(`bank ${b._id} has no absolute logo URL`);
    }
  }
  return problems;
}
