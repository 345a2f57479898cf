import { describe, expect, test } from "bun:test";
import { aggregateState, countsTowardQuorum, quorumRegions, regionCountsDown, type RegionView } from "../../src/domain/consensus.ts";
import type { MonitorState } from "../../src/domain/monitor.ts";

const NOW = 1_800_000_000_000;
const INTERVAL = 60;

/** A region that reported `agoSec` seconds ago; consecutive_down defaults to what the status implies. */
function r(region: string, status: RegionView["last_status"], downs = status === "down" ? 1 : 0, agoSec = 5): RegionView {
  return { region, last_status: status, last_checked_at: NOW - agoSec * 1000, consecutive_down: downs };
}

interface Case {
  name: string;
  current: MonitorState;
  regions: RegionView[];
  confirmations?: number;
  want: MonitorState;
}

const cases: Case[] = [
  // one region
  { name: "no check yet is unknown", current: "unknown", regions: [], want: "unknown" },
  { name: "no region view left (the last one left the quorum) keeps the state", current: "down", regions: [], want: "down" },
  { name: "first up check", current: "unknown", regions: [r("a", "up")], want: "up" },
  { name: "first degraded check", current: "unknown", regions: [r("a", "degraded")], want: "degraded" },
  { name: "first down check, unconfirmed, shows degraded", current: "up", regions: [r("a", "down", 1)], want: "degraded" },
  { name: "second consecutive down turns down (confirmations 2)", current: "degraded", regions: [r("a", "down", 2)], want: "down" },
  { name: "more downs stay down", current: "down", regions: [r("a", "down", 7)], want: "down" },
  { name: "recovery to up leaves down", current: "down", regions: [r("a", "up")], want: "up" },
  { name: "recovery to degraded leaves down as degraded", current: "down", regions: [r("a", "degraded")], want: "degraded" },
  { name: "confirmations 1: first down is down", current: "up", regions: [r("a", "down", 1)], confirmations: 1, want: "down" },
  { name: "confirmations 3: two downs are not enough", current: "up", regions: [r("a", "down", 2)], confirmations: 3, want: "degraded" },
  { name: "confirmations 3: three downs are", current: "degraded", regions: [r("a", "down", 3)], confirmations: 3, want: "down" },
  { name: "confirmations 0 is treated as 1", current: "up", regions: [r("a", "down", 1)], confirmations: 0, want: "down" },
  { name: "down while up once any check exists from unknown", current: "unknown", regions: [r("a", "down", 2)], want: "down" },

  // staleness: only regions that reported within the last 3 intervals count
  { name: "the only region went silent: keep the current state (down)", current: "down", regions: [r("a", "down", 2, 3 * INTERVAL + 1)], want: "down" },
  { name: "the only region went silent: keep the current state (up)", current: "up", regions: [r("a", "down", 5, 3 * INTERVAL + 1)], want: "up" },
  { name: "exactly 3 intervals old still counts", current: "up", regions: [r("a", "down", 2, 3 * INTERVAL)], want: "down" },
  { name: "a stale down region does not outvote a fresh up one", current: "up", regions: [r("a", "down", 9, 4 * INTERVAL), r("b", "up")], want: "up" },

  // several regions
  { name: "2 of 3 down turns down", current: "up", regions: [r("a", "down", 2), r("b", "down", 2), r("c", "up")], want: "down" },
  { name: "1 of 3 down stays up", current: "up", regions: [r("a", "down", 2), r("b", "up"), r("c", "up")], want: "up" },
  { name: "1 of 3 down leaves down", current: "down", regions: [r("a", "down", 2), r("b", "up"), r("c", "up")], want: "up" },
  { name: "tie keeps down", current: "down", regions: [r("a", "down", 2), r("b", "up")], want: "down" },
  { name: "tie keeps not-down (up)", current: "up", regions: [r("a", "down", 2), r("b", "up")], want: "up" },
  { name: "tie from unknown is not down", current: "unknown", regions: [r("a", "down", 2), r("b", "up")], want: "up" },
  { name: "a region dropping out of a 2-1 down does not flip by itself", current: "down", regions: [r("a", "down", 2), r("b", "up"), r("c", "down", 2, 3 * INTERVAL + 10)], want: "down" },
  { name: "unconfirmed downs count toward degraded, not down", current: "up", regions: [r("a", "down", 1), r("b", "down", 1), r("c", "up")], want: "degraded" },
  { name: "majority degraded", current: "up", regions: [r("a", "degraded"), r("b", "degraded"), r("c", "up")], want: "degraded" },
  { name: "degraded plus confirmed down (not majority down) is degraded", current: "up", regions: [r("a", "down", 2), r("b", "degraded"), r("c", "up")], want: "degraded" },
  { name: "half degraded is not a majority", current: "up", regions: [r("a", "degraded"), r("b", "up")], want: "up" },
  { name: "leaving down to degraded by majority", current: "down", regions: [r("a", "degraded"), r("b", "degraded"), r("c", "down", 3)], want: "degraded" },
  { name: "tie keeps down even with degraded others", current: "down", regions: [r("a", "down", 2), r("b", "down", 2), r("c", "degraded"), r("d", "up")], want: "down" },
  { name: "all regions silent keeps degraded", current: "degraded", regions: [r("a", "up", 0, 1000), r("b", "up", 0, 1000)], want: "degraded" },
];

describe("aggregateState", () => {
  for (const c of cases) {
    test(c.name, () => {
      expect(aggregateState({ current: c.current, intervalSec: INTERVAL, now: NOW, confirmations: c.confirmations ?? 2, regions: c.regions })).toBe(c.want);
    });
  }
});

describe("helpers", () => {
  test("quorumRegions keeps regions that reported within 3 intervals", () => {
    const got = quorumRegions([r("fresh", "up", 0, 10), r("edge", "up", 0, 180), r("old", "up", 0, 181)], INTERVAL, NOW).map((x) => x.region);
    expect(got).toEqual(["fresh", "edge"]);
  });

  test("regionCountsDown needs the latest check down and enough of them", () => {
    expect(regionCountsDown(r("a", "down", 2), 2)).toBe(true);
    expect(regionCountsDown(r("a", "down", 1), 2)).toBe(false);
    // a stale counter on an up region never counts
    expect(regionCountsDown({ ...r("a", "up"), consecutive_down: 5 }, 2)).toBe(false);
  });
});

describe("countsTowardQuorum (docs/regions.md \"Monitor types on probes\")", () => {
  const docker = (docker_host: string | null) => ({ monitor_type: "docker", docker_host });
  test("a probe peer's docker_error over a unix socket does not count; everything else does", () => {
    expect(countsTowardQuorum(docker(null), "docker_error", true)).toBe(false);
    expect(countsTowardQuorum(docker("unix:///run/user/1000/docker.sock"), "docker_error", true)).toBe(false);
    // the leader's own check counts: that is where the socket is expected
    expect(countsTowardQuorum(docker(null), "docker_error", false)).toBe(true);
    // Docker over TCP is reachable from anywhere: a failure to ask it is a failure
    expect(countsTowardQuorum(docker("tcp://192.0.2.10:2375"), "docker_error", true)).toBe(true);
    expect(countsTowardQuorum(docker("http://192.0.2.10:2375"), "docker_error", true)).toBe(true);
    // what the probe learned about the container counts, whoever asked
    for (const code of ["container_not_running", "container_not_found", "container_unhealthy", null] as const) expect(countsTowardQuorum(docker(null), code, true)).toBe(true);
    expect(countsTowardQuorum({ monitor_type: "http", docker_host: null }, "docker_error", true)).toBe(true);
  });
});
