import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { toMerchantMessage } from "../merchant-message.js";
import { secretsOf, toMerchantRecord, type MerchantRow } from "../store.js";

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** Where the previous page ended: merchants are listed by (created_at, id). */
interface Cursor {
  createdAt: number;
  id: string;
}

function encodePageToken(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString("base64url");
}

function decodePageToken(token: string): Cursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt) || typeof id !== "string") return undefined;
    return { createdAt, id };
  } catch {
    return undefined;
  }
}

const listMerchantsInput = z.object({
  pageSize: z
    .number()
    .int()
    .max(MAX_PAGE_SIZE, `must be 1 to ${MAX_PAGE_SIZE}`)
    .transform((n) => (n === 0 ? DEFAULT_PAGE_SIZE : n)),
  pageToken: z.string().transform((token, ctx) => {
    if (token === "") return undefined;
    const cursor = decodePageToken(token);
    if (!cursor) {
      ctx.addIssue({ code: "custom", message: "is not a token from a previous page" });
      return z.NEVER;
    }
    return cursor;
  }),
});

export function listMerchants(ctx: MerchantContext): Rpc<typeof MerchantService, "listMerchants"> {
  return {
    async listMerchants(req) {
      const { pageSize, pageToken: after } = parseRequest(listMerchantsInput, req);
      let query = ctx.db<MerchantRow>("merchants")
        .orderBy([{ column: "created_at" }, { column: "id" }])
        .limit(pageSize + 1);
      if (after) {
        query = query.where((q) => {
          q.where("created_at", ">", after.createdAt).orWhere((same) => {
            same.where("created_at", "=", after.createdAt).andWhere("id", ">", after.id);
          });
        });
      }
      const rows = await query;
      const page = rows.slice(0, pageSize).map(toMerchantRecord);
      const last = page[page.length - 1];
      const secrets = await secretsOf(ctx.db, page.map((m) => m.id));
      const now = ctx.clock.now().getTime();
      return {
        merchants: page.map((m) => toMerchantMessage(m, secrets.get(m.id) ?? [], now)),
        nextPageToken: rows.length > pageSize && last ? encodePageToken({ createdAt: last.createdAt, id: last.id }) : "",
      };
    },
  };
}
