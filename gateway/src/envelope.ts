import type { Clock } from "@payments/kit";

/** The envelope of api.md: every JSON response of the gateway has one of these two shapes. */
export interface SuccessEnvelope<T> {
  success: true;
  data: T;
  timestamp: number;
}

export interface FailureEnvelope {
  success: false;
  error: { code: string; message: string; details?: Record<string, string> };
  timestamp: number;
}

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now().getTime() / 1000);
}

export function success<T>(data: T, clock: Clock): SuccessEnvelope<T> {
  return { success: true, data, timestamp: unixSeconds(clock) };
}

/** The success envelope around data already serialised as JSON, with the same keys in the same order as `success`. */
export function successJson(dataJson: string, clock: Clock): string {
  return `{"success":true,"data":${dataJson},"timestamp":${unixSeconds(clock)}}`;
}

export function failure(code: string, message: string, clock: Clock, details?: Record<string, string>): FailureEnvelope {
  return { success: false, error: details ? { code, message, details } : { code, message }, timestamp: unixSeconds(clock) };
}
