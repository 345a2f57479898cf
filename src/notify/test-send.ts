import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { AppContext } from "../context.ts";
import { toChannelConfig } from "../store/notification-channels.ts";
import type { NotificationChannelRow } from "../store/tables.ts";
import { deliverOnce } from "./deliver.ts";
import { sampleAlert } from "./sample-alert.ts";
import type { DeliveryOutcome } from "./types.ts";

/** A test send waits at most this long, so the API request that asked for it stays short. */
export const TEST_SEND_TIMEOUT_MS = 10_000;

/**
 * Sends the sample alert through a channel once, synchronously, bypassing the outbox: it is for a
 * person checking a configuration, so it is neither retried nor recorded. A disabled channel is
 * sent to anyway: testing before enabling is the point.
 */
export async function sendTestAlert(ctx: AppContext, row: NotificationChannelRow): Promise<DeliveryOutcome> {
  let channel;
  try {
    channel = toChannelConfig(row, ctx.secrets);
  } catch {
    return { ok: false, statusCode: null, error: "the channel's secrets cannot be decrypted (was the secret key replaced?)", permanent: true };
  }
  const extraCa = ctx.config.extraCaFile ? readFileSync(ctx.config.extraCaFile, "utf8") : undefined;
  return deliverOnce(sampleAlert(ctx.config.baseUrl, ctx.clock.now()), channel, AbortSignal.timeout(TEST_SEND_TIMEOUT_MS + 1000), {
    deliveryId: randomUUID(),
    extraCa,
    timeoutMs: TEST_SEND_TIMEOUT_MS,
    blockPrivateTargets: await ctx.privateTargets.blocksNow(row.account_id),
  });
}
