import type { AlertPayload } from "../domain/alert-payload.ts";
import type { ChannelConfig } from "../store/notification-channels.ts";

export type { AlertPayload, ChannelConfig };

/**
 * How one delivery attempt went. `permanent` failures are not retried (a 4xx other than 408/429, a
 * rejected SMTP recipient, a channel missing its settings); temporary ones are, after
 * `retryAfterMs` when the receiver asked for it (Retry-After).
 */
export interface DeliveryOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  permanent: boolean;
  retryAfterMs?: number;
}

/** Per-send context: the alert's stable delivery id (X-Vigil-Delivery) and the trust store. */
export interface SendContext {
  deliveryId: string;
  /** PEM of --extra-ca, trusted besides the system roots */
  extraCa?: string;
  timeoutMs: number;
  /** the channel's account refuses private, loopback and link-local receivers */
  blockPrivateTargets?: boolean;
}

/** One channel type's sender: formats the alert in the channel's own way and delivers it once. */
export interface ChannelSender {
  send(alert: AlertPayload, channel: ChannelConfig, signal: AbortSignal, sc: SendContext): Promise<DeliveryOutcome>;
}

export const delivered = (statusCode: number | null): DeliveryOutcome => ({ ok: true, statusCode, error: null, permanent: false });
export const misconfigured = (error: string): DeliveryOutcome => ({ ok: false, statusCode: null, error, permanent: true });
