/**
 * What one instance announces after a commit (`monitor.changed`, `monitor.state`,
 * `maintenance_window.changed`), heard by the others on the same database (README "Several
 * instances"), through PostgreSQL's LISTEN/NOTIFY. The scheduler that checks a monitor created on
 * another instance, the peer feed a probe follows on any instance, the heartbeat token cache, the
 * leader's maintenance window timer and open dashboards all learn of it as if it were local, marked
 * `remote`.
 *
 * A notification sent while an instance's listening connection is down is lost to it. Bun's client
 * reconnects by itself and listens again; each time it does, `monitors.resync` tells whoever keeps
 * definitions in memory to read them all again.
 */
import type { AppContext, AppEvents } from "../context.ts";
import type { Logger } from "../lib/logger.ts";
import type { PostgresStore } from "../store/database.ts";

/** the channel every instance of a database listens on */
const CHANGES_CHANNEL = "vigil_changes";

const RELAYED = ["monitor.changed", "monitor.state", "maintenance_window.changed"] as const;
type Relayed = (typeof RELAYED)[number];

interface Notice {
  /** the instance that announced it */
  from: string;
  event: Relayed;
  payload: AppEvents[Relayed];
}

export async function startChangeRelay(ctx: AppContext, store: PostgresStore, instanceId: string, log: Logger): Promise<{ stop(): Promise<void> }> {
  let listens = 0;
  const subscription = await store.sql.listen(
    CHANGES_CHANNEL,
    (text) => {
      let notice: Notice;
      try {
        notice = JSON.parse(text) as Notice;
      } catch {
        return;
      }
      if (notice.from === instanceId || !RELAYED.includes(notice.event)) return;
      ctx.events.emit(notice.event, { ...notice.payload, remote: true } as never);
    },
    () => {
      if (++listens === 1) return;
      log.warn("listening to the other instances again after a lost connection: reloading every monitor definition");
      ctx.events.emit("monitors.resync", {});
    },
  );
  const offs = RELAYED.map((event) =>
    ctx.events.on(event, (payload: AppEvents[Relayed]) => {
      if (payload.remote) return;
      const notice: Notice = { from: instanceId, event, payload };
      store.sql.notify(CHANGES_CHANNEL, JSON.stringify(notice)).catch((err) => log.warn("could not tell the other instances of a change", { event, error: String(err) }));
    }),
  );
  return {
    async stop() {
      for (const off of offs) off();
      await subscription.unlisten().catch(() => {});
    },
  };
}

/**
 * Tells the instances on the database of changes a command made without a server of its own
 * (`vigil import`): the same notices the relay sends, from an instance id no server has, sent
 * before the command closes the database.
 */
export async function announceChanges(store: PostgresStore, from: string, changes: { event: Relayed; payload: AppEvents[Relayed] }[]): Promise<void> {
  for (const c of changes) {
    const notice: Notice = { from, event: c.event, payload: c.payload };
    await store.sql.notify(CHANGES_CHANNEL, JSON.stringify(notice));
  }
}

export type RelayedEvent = Relayed;
