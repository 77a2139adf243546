/**
 * A refusal the console answers on purpose: an HTTP status and a machine code (for the CLI and
 * tests), with a message a person can read. Anything else thrown is a 500 with no detail.
 */
export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string) => new ConsoleError(400, code, message);
export const forbidden = (code: string, message: string) => new ConsoleError(403, code, message);
export const notFound = (message: string) => new ConsoleError(404, "NOT_FOUND", message);
export const conflict = (code: string, message: string) => new ConsoleError(409, code, message);
