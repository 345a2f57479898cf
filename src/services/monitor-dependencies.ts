import type { AppContext } from "../context.ts";
import { cycleMessage, dependencyCycle } from "../domain/alerting-rules.ts";
import type { MonitorWriteResult } from "../domain/monitor-validation.ts";
import { notFound } from "../http/errors.ts";
import type { Db } from "../store/database.ts";
import { escalationChannelIdsByMonitor } from "../store/escalation-channels.ts";
import { accountDependencies, dependencyNeighbours, lockAccountDependencies, ownedMonitorIds, parentIdsByMonitor, type Neighbour } from "../store/monitor-dependencies.ts";
import { findMonitor, ownedChannelIds } from "../store/monitors.ts";
import type { Actor } from "./actor.ts";
import type { MonitorLinks } from "./monitor-attributes.ts";

/**
 * The monitor attributes that name other records for alerting (docs/monitors.md "Dependencies,
 * reminders and escalation"): depends_on_ids and escalation_channel_ids, read for responses and
 * checked on write (this account's ids only, no cycle).
 */

/** Each monitor's parents and escalation channels. */
export async function monitorLinks(db: Db, monitorIds: number[]): Promise<Map<number, MonitorLinks>> {
  const [parents, escalation] = await Promise.all([parentIdsByMonitor(db, monitorIds), escalationChannelIdsByMonitor(db, monitorIds)]);
  return new Map(monitorIds.map((id) => [id, { depends_on_ids: parents.get(id) ?? [], escalation_channel_ids: escalation.get(id) ?? [] }]));
}

const missing = (what: string, ids: number[]) => `${what} ${ids.join(", ")} ${ids.length === 1 ? "does" : "do"} not exist in this account`;

/**
 * depends_on_ids must name this account's monitors, not the monitor itself (`monitorId`, null on a
 * create); escalation_channel_ids this account's channels. Another account's id reads as missing.
 */
export async function checkAlertingReferences(ctx: AppContext, accountId: number, v: MonitorWriteResult, monitorId: number | null): Promise<void> {
  const add = (attr: string, message: string) => void (v.details[attr] ??= []).push(message);
  const parents = v.changes.depends_on_ids as number[] | undefined;
  if (parents?.length) {
    const owned = await ownedMonitorIds(ctx.db, accountId, parents);
    const foreign = parents.filter((id) => !owned.has(id));
    if (foreign.length) add("depends_on_ids", missing("monitor", foreign));
    if (monitorId !== null && parents.includes(monitorId)) add("depends_on_ids", cycleMessage([monitorId, monitorId]));
  }
  const channels = v.changes.escalation_channel_ids as number[] | undefined;
  if (channels?.length) {
    const owned = await ownedChannelIds(ctx.db, accountId, channels);
    const foreign = channels.filter((id) => !owned.has(id));
    if (foreign.length) add("escalation_channel_ids", missing("channel", foreign));
  }
}

/**
 * The 422 message when giving `monitorId` these parents would close a cycle, else null. Run in the
 * write's transaction, after the account's dependency changes are serialised, so two writes cannot
 * together make a cycle that neither makes alone.
 */
export async function dependencyCycleProblem(trx: Db, accountId: number, monitorId: number, parents: number[] | undefined): Promise<string | null> {
  if (!parents?.length) return null;
  await lockAccountDependencies(trx, accountId);
  const cycle = dependencyCycle(monitorId, parents, await accountDependencies(trx, accountId));
  return cycle ? cycleMessage(cycle) : null;
}

/** A monitor's parents and children (monitors that depend on it), for its page in the dashboard. */
export async function monitorNeighbours(ctx: AppContext, actor: Actor, id: number): Promise<{ parents: Neighbour[]; children: Neighbour[] }> {
  if (!(await findMonitor(ctx.db, actor.accountId, id))) throw notFound("monitor");
  return dependencyNeighbours(ctx.db, actor.accountId, id);
}
