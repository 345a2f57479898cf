/**
 * The consensus rule that turns per-region check results into a monitor's aggregate state
 * (docs/monitors.md "State and consensus"). Pure: the engine feeds it the stored region views
 * and the multi-region code feeds it the same shape, so there is one rule for one region and many.
 */
import type { CheckErrorCode, CheckStatus } from "./check-result.ts";
import type { MonitorState } from "./monitor.ts";
import { dockerSocketPath } from "./monitor-targets.ts";

/** One region's view of a monitor: its latest check and how many downs in a row led up to it. */
export interface RegionView {
  region: string;
  last_status: CheckStatus;
  /** epoch ms of the region's latest check */
  last_checked_at: number;
  /** consecutive `down` checks ending with the latest one (0 when the latest is not down) */
  consecutive_down: number;
}

export interface ConsensusInput {
  /** the monitor's aggregate state before this evaluation */
  current: MonitorState;
  intervalSec: number;
  /** epoch ms */
  now: number;
  /** consecutive down checks before a region counts as down (--confirmations, default 2) */
  confirmations: number;
  regions: readonly RegionView[];
}

/** A region that has sent nothing for this many intervals leaves the quorum until it reports again. */
export const QUORUM_WINDOW_INTERVALS = 3;

/** The regions that count: those that reported within the last 3 intervals. */
export function quorumRegions(regions: readonly RegionView[], intervalSec: number, now: number): RegionView[] {
  const oldest = now - QUORUM_WINDOW_INTERVALS * intervalSec * 1000;
  return regions.filter((r) => r.last_checked_at >= oldest);
}

/**
 * Whether a region's result counts toward the quorum at all. A probe peer's `docker_error` on a
 * monitor that asks Docker over a unix socket does not: the socket is a machine's own, so a probe
 * that lacks it (or whose Docker cannot answer) says nothing about the container the monitor
 * watches (docs/regions.md "Monitor types on probes"). The check is kept as history; the region
 * leaves the quorum until it reports something else.
 */
export function countsTowardQuorum(monitor: { monitor_type: string; docker_host: string | null }, errorCode: CheckErrorCode | null, fromPeer: boolean): boolean {
  return !(fromPeer && errorCode === "docker_error" && monitor.monitor_type === "docker" && dockerSocketPath(monitor.docker_host) !== null);
}

/** Whether a region counts as down: its last `confirmations` consecutive checks were down. */
export function regionCountsDown(r: RegionView, confirmations: number): boolean {
  return r.last_status === "down" && r.consecutive_down >= Math.max(1, confirmations);
}

/**
 * The new aggregate state.
 *
 * - `unknown` before any region has reported; with no region view at all the state is kept, so a
 *   monitor whose last region left the quorum (countsTowardQuorum) does not flip back to unknown.
 * - Among the quorum, the monitor turns `down` when more regions count as down than not, leaves
 *   `down` when fewer do, and a tie keeps the down/not-down verdict it had (so a region dropping
 *   out never flips it by itself). An empty quorum (every region silent) is a 0–0 tie.
 * - When not down: `degraded` when a strict majority of the quorum's latest checks are degraded or
 *   down (a first, unconfirmed failure therefore shows as degraded), else `up`.
 *
 * @example
 * aggregateState({ current: "up", intervalSec: 60, now, confirmations: 2,
 *   regions: [{ region: "local", last_status: "down", last_checked_at: now, consecutive_down: 2 }] }) // "down"
 */
export function aggregateState(input: ConsensusInput): MonitorState {
  const { current, regions } = input;
  const quorum = quorumRegions(regions, input.intervalSec, input.now);
  if (quorum.length === 0) return current;

  const down = quorum.filter((r) => regionCountsDown(r, input.confirmations)).length;
  const notDown = quorum.length - down;
  const isDown = down > notDown ? true : down < notDown ? false : current === "down";
  if (isDown) return "down";

  const unhealthy = quorum.filter((r) => r.last_status === "degraded" || r.last_status === "down").length;
  return unhealthy * 2 > quorum.length ? "degraded" : "up";
}
