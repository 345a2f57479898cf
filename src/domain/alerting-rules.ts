/**
 * The rules of a monitor's alerting attributes that need more than one value or more than one
 * monitor (docs/monitors.md "Dependencies, reminders and escalation"): an escalation needs its delay,
 * and dependencies never form a cycle. Pure, like the rest of the monitor validation.
 */

/** Escalation channels without a delay would never be used: the delay is asked for. */
export function escalationRules(
  merged: Record<string, unknown>,
  touched: (...names: string[]) => boolean,
  clean: (...names: string[]) => boolean,
  add: (attr: string, message: string) => void,
): void {
  if (!touched("escalation_channel_ids", "escalate_after_minutes") || !clean("escalation_channel_ids", "escalate_after_minutes")) return;
  const channels = merged.escalation_channel_ids;
  if (Array.isArray(channels) && channels.length > 0 && (merged.escalate_after_minutes ?? null) === null) {
    add("escalate_after_minutes", "is required when escalation_channel_ids names channels: the minutes an incident stays open before it escalates (1 to 1440)");
  }
}

/**
 * The cycle that giving `monitorId` the parents `parents` would close, as the ids along it
 * (`monitorId` first and last, each depending on the next), or null. `edges` maps each other monitor
 * of the account to its parents; `monitorId`'s own current parents are ignored, being replaced.
 *
 * @example dependencyCycle(1, [2], new Map([[2, [3]], [3, [1]]])) // [1, 2, 3, 1]
 */
export function dependencyCycle(monitorId: number, parents: readonly number[], edges: ReadonlyMap<number, readonly number[]>): number[] | null {
  if (parents.includes(monitorId)) return [monitorId, monitorId];
  // depth-first from each new parent, remembering how each monitor was reached
  const cameFrom = new Map<number, number>();
  const stack: number[] = [];
  for (const p of parents) {
    if (cameFrom.has(p)) continue;
    cameFrom.set(p, monitorId);
    stack.push(p);
  }
  while (stack.length > 0) {
    const id = stack.pop()!;
    for (const next of id === monitorId ? [] : (edges.get(id) ?? [])) {
      if (next === monitorId) {
        const path = [monitorId, id];
        for (let at = id; cameFrom.get(at) !== monitorId; ) path.splice(1, 0, (at = cameFrom.get(at)!));
        return [...path, monitorId];
      }
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, id);
      stack.push(next);
    }
  }
  return null;
}

/** "3 → 5 → 3": a cycle as the validator names it. */
export function cycleMessage(cycle: readonly number[]): string {
  if (cycle.length === 2) return "cannot include the monitor itself";
  return `would make a dependency cycle: ${cycle.join(" → ")} (each monitor depends on the next)`;
}
