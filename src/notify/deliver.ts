import type { ChannelType } from "../domain/notification-channel-schema.ts";
import { CHANNEL_SENDERS } from "./channels/index.ts";
import type { AlertPayload, ChannelConfig, ChannelSender, DeliveryOutcome, SendContext } from "./types.ts";

export type SenderTable = Readonly<Record<ChannelType, ChannelSender>>;

/** Replaces every secret value in `text` (a bot token in a URL, an SMTP password echoed by a server). */
export function scrubSecrets(text: string | null, secrets: readonly string[]): string | null {
  if (text === null) return null;
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join("[redacted]");
  for (const s of secrets) if (s.length >= 4) out = out.split(encodeURIComponent(s)).join("[redacted]");
  return out;
}

/**
 * One delivery attempt through the channel's sender: never throws, and the outcome's error carries
 * no secret of the channel, so it can be stored, logged and returned by the test endpoint.
 */
export async function deliverOnce(alert: AlertPayload, channel: ChannelConfig, signal: AbortSignal, sc: SendContext, senders: SenderTable = CHANNEL_SENDERS): Promise<DeliveryOutcome> {
  const sender = senders[channel.type];
  let outcome: DeliveryOutcome;
  if (!sender) outcome = { ok: false, statusCode: null, error: `unknown channel type ${channel.type}`, permanent: true };
  else {
    try {
      outcome = await sender.send(alert, channel, signal, sc);
    } catch (err) {
      outcome = { ok: false, statusCode: null, error: `sender failed: ${(err as Error).message}`, permanent: false };
    }
  }
  return { ...outcome, error: scrubSecrets(outcome.error, channel.secretValues) };
}
