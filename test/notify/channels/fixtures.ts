/**
 * What every channel's test shares: one alert down and the same monitor back up, the summary lines
 * each channel lays out in its own way, and a channel config around a receiver's URL. Each channel's
 * sender is driven through deliverOnce, as the dispatcher drives it, against a real receiver on
 * loopback, and its test asserts the exact request: path, headers and body as that channel's own API
 * expects them.
 */
import { afterAll } from "bun:test";
import type { AlertPayload } from "../../../src/domain/alert-payload.ts";
import { deliverOnce } from "../../../src/notify/deliver.ts";
import type { ChannelConfig } from "../../../src/store/notification-channels.ts";
import { startReceiver, type Receiver } from "../helpers.ts";

export const DOWN: AlertPayload = {
  event: "monitor.down",
  occurred_at: "2026-11-21T10:00:00.000Z",
  monitor: { id: "7", name: "Checkout API", monitor_type: "http", target: "https://shop.example.com/health" },
  state: "down",
  previous_state: "up",
  incident: { id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: null, duration_ms: null },
  error_code: "http_error",
  error_message: "expected 200-299, got 503",
  regions: [
    { region: "eu", status: "down", last_checked_at: "2026-11-21T09:59:58.000Z" },
    { region: "us", status: "up", last_checked_at: "2026-11-21T09:59:59.000Z" },
  ],
  dashboard_url: "https://vigil.example.com/monitors/7",
};

export const UP: AlertPayload = {
  ...DOWN,
  event: "monitor.up",
  occurred_at: "2026-11-21T10:02:05.000Z",
  state: "up",
  previous_state: "down",
  incident: { id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: "2026-11-21T10:02:05.000Z", duration_ms: 125000 },
  error_code: null,
  error_message: null,
  regions: [{ region: "eu", status: "up", last_checked_at: "2026-11-21T10:02:05.000Z" }],
};

/** The "Label: value" lines of DOWN, in order. */
export const DOWN_LINES = [
  "Monitor: Checkout API",
  "Type: http",
  "Target: https://shop.example.com/health",
  "State: down (was up)",
  "Regions: 1/2 down — eu: down, us: up",
  "Error: http_error: expected 200-299, got 503",
  "Incident: #3 opened 2026-11-21T10:00:00.000Z",
  "Time: 2026-11-21T10:00:00.000Z",
];

/** DOWN as the plain-text body of the push channels (ntfy, gotify, pushover). */
export const DOWN_TEXT = ["Checkout API is down (was up).", "", ...DOWN_LINES, "", "Dashboard: https://vigil.example.com/monitors/7"].join("\n");

export function channel(type: ChannelConfig["type"], settings: Record<string, unknown>, secretValues: string[] = []): ChannelConfig {
  return { id: 1, accountId: 1, name: "c", type, isEnabled: true, settings, secretValues };
}

export const send = (p: AlertPayload, c: ChannelConfig) => deliverOnce(p, c, new AbortController().signal, { deliveryId: "d-1", timeoutMs: 5000 });

/** Starts receivers for one test file and stops them after its tests: `const receiver = receivers();` */
export function receivers(): (respond?: Receiver["respond"]) => Receiver {
  const started: Receiver[] = [];
  afterAll(async () => void (await Promise.all(started.map((r) => r.stop()))));
  return (respond) => {
    const r = startReceiver(respond);
    started.push(r);
    return r;
  };
}

/** The same monitor's certificate 10 days before it expires: no state changed, it stays degraded. */
export const EXPIRING: AlertPayload = {
  ...DOWN,
  event: "monitor.expiring",
  occurred_at: "2026-11-24T10:00:00.000Z",
  state: "degraded",
  previous_state: "degraded",
  incident: null,
  error_code: null,
  error_message: null,
  regions: [{ region: "eu", status: "degraded", last_checked_at: "2026-11-24T10:00:00.000Z" }],
  expiry: { kind: "certificate", expires_at: "2026-12-04T09:30:00.000Z", days_left: 10 },
};

/** EXPIRING as the plain-text body of the push channels. */
export const EXPIRING_TEXT = [
  "The certificate of Checkout API expires on 2026-12-04 09:30 UTC (10 days left): renew it before then.",
  "",
  "Monitor: Checkout API",
  "Type: http",
  "Target: https://shop.example.com/health",
  "Expires: 2026-12-04 09:30 UTC (10 days left)",
  "State: degraded",
  "Time: 2026-11-24T10:00:00.000Z",
  "",
  "Dashboard: https://vigil.example.com/monitors/7",
].join("\n");
