/**
 * What the scheduler service hands each probe from the configuration: --rdap-bootstrap reaches the
 * domain probe (the same service runs the checks of a leader and of a probe peer).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { CheckResult } from "../../src/domain/check-result.ts";
import { domainProbe } from "../../src/probes/domain.ts";
import { dbMonitorSource } from "../../src/scheduler/db-source.ts";
import { startSchedulerService } from "../../src/scheduler/service.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "../engine/helpers.ts";
import { startRdapServer, type RdapServer } from "../helpers/rdap-server.ts";
import { waitFor } from "../helpers/server.ts";

let rdap: RdapServer;
let h: EngineHarness;
beforeAll(async () => {
  rdap = await startRdapServer({ tlds: ["test"], domains: { "wired.test": { expires: new Date(Date.now() + 400 * 86_400_000).toISOString() } } });
  h = await engineHarness(["--rdap-bootstrap", rdap.bootstrapUrl]);
});
afterAll(async () => {
  await h.close();
  await rdap.stop();
});

test("--rdap-bootstrap reaches the domain probe through the scheduler", async () => {
  // until monitors of type domain can be stored, an http monitor row is run by the domain probe
  await insertMonitor(h, { target: "wired.test" });
  const results: CheckResult[] = [];
  const service = await startSchedulerService(h.ctx, async (_id, _region, r) => void results.push(r), dbMonitorSource(h.ctx, h.ctx.config.region), {
    probes: { byType: { http: domainProbe }, synthetic: domainProbe },
  });
  try {
    expect(await waitFor(() => results.length > 0)).toBe(true);
    expect(results[0]).toMatchObject({ status: "up", error_code: null });
    expect(rdap.count("/dns.json")).toBe(1);
    expect(rdap.count("/rdap/domain/wired.test")).toBe(1);
  } finally {
    await service.stop(1000);
  }
});
