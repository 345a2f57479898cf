/**
 * What the rest of the process asks of the cluster (README "Several instances"): does this
 * instance lead (the once-only work: alert delivery, heartbeat deadlines, maintenance), and which
 * monitors of its region does it check. On SQLite, or a PostgreSQL database with one instance, the
 * answers are "yes" and "all of them".
 */

/** What /readyz and the logs say about this instance's place in the cluster. */
export interface ClusterStatus {
  /** this process's id among the instances (new at each start) */
  instance: string;
  region: string;
  /** true while this instance holds the leadership lease */
  leader: boolean;
  /** the instance holding the leadership lease as last read, or null when none does */
  leader_instance: string | null;
  /** the live instances of this region that share its checks, this one included once it has joined */
  region_instances: string[];
}

export interface ClusterView {
  readonly instanceId: string;
  /** true while this instance holds the leadership lease: it alone runs the once-only work */
  readonly leading: boolean;
  /** whether this instance checks `monitorId` in its region */
  owns(monitorId: number): boolean;
  /** called with true when this instance takes the leadership, false when it loses or gives it up */
  onLeadership(listener: (leading: boolean) => void): () => void;
  /** called after the monitors this instance checks changed (an instance of its region came or went) */
  onShareChange(listener: () => void): () => void;
  status(): ClusterStatus;
}

/** The cluster of one: SQLite, a probe, or a test's context. It leads and checks everything. */
export function soloCluster(region: string): ClusterView {
  const none = () => () => {};
  return {
    instanceId: "solo",
    leading: true,
    owns: () => true,
    onLeadership: none,
    onShareChange: none,
    status: () => ({ instance: "solo", region, leader: true, leader_instance: "solo", region_instances: ["solo"] }),
  };
}
