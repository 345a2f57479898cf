import type { AppContext } from "../../context.ts";
import type { Service } from "../../lib/service.ts";
import { monitorsOfAccounts } from "../../store/peer-feed.ts";
import { MonitorChangeLog } from "./change-log.ts";
import { ResultIngest } from "./ingest.ts";
import { peerLeaderPlugin } from "./plugin.ts";
import { PeerResultQuota } from "./quota.ts";

/**
 * The leader's peer service: the /peer/v1 endpoints, and the change log the definitions feed reads,
 * fed by `monitor.changed` (announced by the API after each committed change).
 */
export function startPeerLeaderService(ctx: AppContext): Service {
  const changes = new MonitorChangeLog();
  const off = ctx.events.on("monitor.changed", ({ monitorId, accountId }) => changes.record(monitorId, accountId));
  // other instances' changes may have been missed: every probe downloads the set again
  const offResync = ctx.events.on("monitors.resync", () => changes.reset());
  // an account's private-target rule travels with each of its monitors' definitions
  ctx.privateTargets.onChange((accountIds) => {
    monitorsOfAccounts(ctx.db, accountIds).then(
      (rows) => rows.forEach((r) => changes.record(r.id, r.account_id)),
      (err) => ctx.log.child("peers").error("could not re-send definitions after an account rule changed", { error: String(err) }),
    );
  });
  let draining = false;
  const ingest = new ResultIngest(ctx, ctx.log.child("peers"));
  return {
    name: "peers",
    plugin: peerLeaderPlugin(ctx, { changes, ingest, quota: new PeerResultQuota(ctx), draining: () => draining }),
    drain() {
      // held long-polls would otherwise keep the server's graceful stop waiting
      draining = true;
      changes.wakeAll();
    },
    async stop() {
      draining = true;
      off();
      offResync();
      changes.wakeAll();
    },
  };
}
