import { errorInfo } from "@payments/kit";

/** The error info (code, reason, field, message) of a call that must fail; throws if it succeeds. */
export async function rejectionOf(call: Promise<unknown>): Promise<ReturnType<typeof errorInfo>> {
  try {
    await call;
  } catch (err) {
    return errorInfo(err);
  }
  throw new Error("the call succeeded but was expected to fail");
}
