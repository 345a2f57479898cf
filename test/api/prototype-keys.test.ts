import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// Body keys are user input: names that exist on Object.prototype must be refused like any unknown
// attribute (422), never crash a validator (500) or reach the prototype.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const base = {
  "/api/v1/monitors": { name: "m", monitor_type: "http", target: "http://127.0.0.1:9/", interval_sec: 60, timeout_ms: 1000 },
  "/api/v1/status-pages": { name: "page" },
  "/api/v1/notification-channels": { name: "c", channel_type: "webhook", url: "http://127.0.0.1:9/hook" },
  "/api/v1/maintenance-windows": { name: "w", monitor_ids: [1], schedule: "0 3 * * *", duration_sec: 600 },
};

for (const [path, body] of Object.entries(base)) {
  for (const key of ["__proto__", "toString", "constructor", "hasOwnProperty", "valueOf"]) {
    test(`POST ${path} with attribute ${key}: 422 naming it`, async () => {
      const raw = JSON.stringify(body).replace(/^\{/, `{${JSON.stringify(key)}:1,`);
      const r = await s.api("POST", path, raw);
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe("validation_error");
      expect(Object.keys(r.json.error.details)).toContain(key);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  }
}
