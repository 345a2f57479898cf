import type { Logger } from "../lib/logger.ts";
import type { Service } from "../lib/service.ts";
import type { ClusterView } from "./view.ts";

/** how long a service that lost the leadership may take to stop (the lease's margin is longer) */
const HANDOVER_STOP_MS = 2_000;

/**
 * A service that runs only while this instance leads (README "Several instances": alert delivery,
 * maintenance): started when the leadership is taken, stopped when it is lost, started again when
 * it comes back. Starts and stops run one after the other, never overlapping. With the leadership
 * held already (always, on SQLite), the service is started before this returns, as if it were
 * started directly, and a failure to start throws.
 */
export async function leaderOnly(cluster: ClusterView, name: string, start: () => Promise<Service>, log: Logger): Promise<Service> {
  let inner: Service | null = null;
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    chain = chain.then(step).catch((err) => log.error("a leader-only service failed to start or stop", { service: name, error: String(err) }));
    return chain;
  };
  const up = async () => {
    if (inner || stopped || !cluster.leading) return;
    inner = await start();
  };
  const down = async (deadlineMs: number) => {
    const s = inner;
    inner = null;
    if (s) await s.stop(deadlineMs);
  };
  // heard before the first start, so a leadership lost while the service starts stops it right after
  const off = cluster.onLeadership((leading) => void enqueue(() => (leading ? up() : down(HANDOVER_STOP_MS))));
  if (cluster.leading) {
    // the first start is awaited here, and its failure fails the start of the process as before
    const first = start().then((s) => void (inner = s));
    chain = first.catch(() => {});
    try {
      await first;
    } catch (err) {
      off();
      throw err;
    }
  }
  return {
    name,
    ready: () => inner?.ready?.() ?? true,
    async stop(deadlineMs) {
      stopped = true;
      off();
      await enqueue(() => down(deadlineMs));
    },
  };
}
