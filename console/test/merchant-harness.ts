import type { MerchantRole } from "@payments/access";
import { api, Browser, csrfOf, doneOf, serviceAdminToken } from "./harness.js";
import { PASSWORD, type Stack } from "./service-harness.js";

export { PASSWORD };

/**
 * A merchant user of `merchantId` made through the real invite path: the admin API with a
 * service admin's token (approved by a second service admin once an admin exists), then the
 * one-time link sets PASSWORD. Returns the user's id.
 */
export async function merchantUserAccount(stack: Stack, merchantId: string, email: string, role: MerchantRole): Promise<{ id: string; email: string }> {
  const invited = await api(stack.c, "POST", `/api/merchants/${encodeURIComponent(merchantId)}/users`, {
    token: await serviceAdminToken(stack.c, "bootstrap-bot"),
    body: { email, displayName: email.split("@")[0], role },
  });
  const done = await doneOf(stack.c, invited).catch((err: Error) => {
    throw new Error(`invite ${email}: ${err.message}`, { cause: err });
  });
  const set = await setMerchantPassword(stack, (done.link as { url: string }).url, PASSWORD);
  if (set.status !== 303) throw new Error(`set password of ${email}: ${set.status}`);
  return { id: (done.user as { id: string }).id, email };
}

/** Opens a merchant user's one-time link in a fresh browser and sets `password`. */
export async function setMerchantPassword(stack: Stack, url: string, password: string): Promise<{ status: number; location: string | null; html: string }> {
  const browser = new Browser(stack.c);
  const link = new URL(url);
  const page = await browser.get(link.pathname + link.search);
  if (page.status !== 200) return { status: page.status, location: page.location, html: page.html };
  return browser.post("/merchant/set-password", { _csrf: csrfOf(page.html), token: link.searchParams.get("token") ?? "", password, confirm: password });
}

/** Signs in through /merchant/sign-in; the browser holds the merchant session (or not: see status). */
export async function merchantSignIn(stack: Stack, email: string, password = PASSWORD): Promise<{ browser: Browser; status: number; location: string | null; html: string }> {
  const browser = new Browser(stack.c);
  const page = await browser.get("/merchant/sign-in");
  const res = await browser.post("/merchant/sign-in", { _csrf: csrfOf(page.html), email, password });
  return { browser, status: res.status, location: res.location, html: res.html };
}

/** A new merchant user of `role`, invited, with a password, signed in through the page. */
export async function signedInMerchantUser(stack: Stack, merchantId: string, email: string, role: MerchantRole): Promise<Browser> {
  await merchantUserAccount(stack, merchantId, email, role);
  const { browser, status } = await merchantSignIn(stack, email);
  if (status !== 303) throw new Error(`merchant sign-in of ${email}: ${status}`);
  return browser;
}

let shops = 0;
/** A new merchant (sandbox unless told), created as the test admin. */
export async function newMerchant(stack: Stack, options: { sandbox?: boolean; name?: string } = {}): Promise<string> {
  const { merchant } = await stack.merchants.createMerchant({ name: options.name ?? `Team Shop ${++shops}`, sandbox: options.sandbox ?? true });
  return merchant!.id;
}
