import type { CheckErrorCode, CheckResult } from "./check-result.ts";

/**
 * Thrown while talking to a target (a check, or a notification's receiver) to end the exchange with
 * a specific error code; probes catch it at their boundary and turn it into a down result, senders
 * into a failed delivery, so it never escapes to the scheduler or the dispatcher.
 */
export class ProbeFailure extends Error {
  constructor(public readonly code: CheckErrorCode, message: string, public readonly extra: Partial<CheckResult> = {}) {
    super(message);
  }
}
