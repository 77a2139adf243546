import { Busboy } from "@fastify/busboy";
import { ConsoleError } from "../errors.js";
import type { ConsoleMiddleware } from "../state.js";

/** A file a form sent (the one the route takes): its name as the browser gave it, and its bytes. */
export interface UploadedFile {
  field: string;
  fileName: string;
  content: Buffer;
}

function tooLarge(limit: number): ConsoleError {
  return new ConsoleError(413, "BODY_TOO_LARGE", `the upload is larger than ${limit} bytes`);
}

/**
 * A multipart/form-data body (a form with a file), for the routes that take one (`upload` in
 * route.ts), read only once the operator's session and role have been checked, up to
 * CONSOLE_UPLOAD_LIMIT bytes: its fields into state.form (the hidden `_csrf` among them, which
 * the CSRF check after it reads) and its one file into state.upload. A larger body is refused
 * (413) whole; any other body type goes on to the route as read-body left it.
 */
export function readMultipart(options: { limit: number }): ConsoleMiddleware {
  return async (ctx, next) => {
    const type = ctx.get("content-type");
    if (ctx.method !== "POST" || !/^multipart\/form-data\s*;/i.test(type)) {
      await next();
      return;
    }
    const declared = Number(ctx.get("content-length") || 0);
    if (declared > options.limit) throw tooLarge(options.limit);
    const form: Record<string, string> = {};
    let upload: { field: string; fileName: string; content: Buffer } | undefined;
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const fail = (err: unknown) => {
        if (failed) return;
        failed = true;
        ctx.req.unpipe(parser);
        ctx.req.resume();
        reject(err instanceof ConsoleError ? err : new ConsoleError(400, "INVALID_MULTIPART", "the form could not be read"));
      };
      let parser: ReturnType<typeof Busboy>;
      try {
        parser = Busboy({ headers: { ...ctx.req.headers, "content-type": type }, limits: { fileSize: options.limit, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 21 } });
      } catch (err) {
        fail(err);
        return;
      }
      let received = 0;
      ctx.req.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > options.limit) fail(tooLarge(options.limit));
      });
      parser.on("field", (name, value) => {
        form[name] = value;
      });
      parser.on("file", (field, stream, fileName) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("limit", () => fail(tooLarge(options.limit)));
        stream.on("end", () => {
          if (!stream.truncated) upload = { field, fileName, content: Buffer.concat(chunks) };
        });
      });
      parser.on("error", fail);
      parser.on("finish", () => {
        if (!failed) resolve();
      });
      ctx.req.pipe(parser);
    });
    ctx.state.form = form;
    if (upload && upload.content.length > 0) ctx.state.upload = upload;
    await next();
  };
}
