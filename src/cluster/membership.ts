/**
 * This instance's membership of the cluster on PostgreSQL (README "Several instances"), renewed
 * every `renewMs` on connections of its own:
 *
 * - its row in `instances`, alive until `leaseMs` after the last renewal by the database's clock.
 *   The live rows of its region are its region's members; the monitors it checks follow from them
 *   (share.ts). An instance killed with -9 drops out when its row expires; one that stops cleanly
 *   deletes it at once.
 * - the `leader` lease, taken by whoever claims it first once it is free or expired, renewed by its
 *   holder. The holder gives it up by itself `marginMs` before it could expire, counted on its own
 *   monotonic clock from when its last successful renewal was *sent* (the database set the expiry
 *   later than that), so it stops leading before anyone else can start, whatever the wall clocks say.
 *
 * A new instance that finds others of its region waits one renewal period before it checks
 * anything: by then they have seen it and dropped the monitors it takes over, so a join leaves a
 * short gap rather than two checks. An instance that cannot reach the database keeps checking its
 * last share (results wait in memory); it only gives up leading.
 */
import type { Logger } from "../lib/logger.ts";
import type { Db } from "../store/database.ts";
import { claimLease, listLiveInstances, pruneInstances, releaseLease, removeInstance, renewInstance, type InstanceIdentity } from "../store/instances.ts";
import { Share } from "./share.ts";
import type { ClusterStatus, ClusterView } from "./view.ts";

const LEADER_LEASE = "leader";

export interface MembershipTiming {
  /** how long a renewal keeps a row or the leader lease alive, by the database's clock */
  leaseMs: number;
  /** how often rows and the lease are renewed */
  renewMs: number;
  /** a leader gives the lease up this long before it could expire without a renewal */
  marginMs: number;
}

const DEFAULT_TIMING: MembershipTiming = { leaseMs: 10_000, renewMs: 2_000, marginMs: 2_500 };

/** a joining instance waits for the others' next renewal, and this much more for their queries to end */
const JOIN_SLACK_MS = 500;

/** Rows of instances dead this long are deleted (each start registers a new id), by the leader now and then. */
const PRUNE_AFTER_MS = 3_600_000;
const PRUNE_EVERY_TICKS = 30;
const FAILURE_LOG_EVERY_MS = 30_000;
/** how long a stop waits for the database before leaving it to the lease's expiry */
const STOP_WAIT_MS = 1_500;

export class ClusterMembership implements ClusterView {
  private share: Share;
  private leaderId: string | null = null;
  private isLeader = false;
  /** performance.now() after which this instance may no longer count itself the leader */
  private leaderUntil = 0;
  private demoteTimer: ReturnType<typeof setTimeout> | null = null;
  private joinTimer: ReturnType<typeof setTimeout> | null = null;
  private joinedAt: number | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = false;
  private ticks = 0;
  /** renewals failed in a row, and when the last line about them was logged */
  private failures = 0;
  private failureLoggedAt = 0;
  private readonly leadershipListeners = new Set<(leading: boolean) => void>();
  private readonly shareListeners = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly me: InstanceIdentity,
    private readonly log: Logger,
    private readonly timing: MembershipTiming = DEFAULT_TIMING,
  ) {
    this.share = new Share(me.id, []);
  }

  get instanceId(): string {
    return this.me.id;
  }

  get leading(): boolean {
    return this.isLeader;
  }

  owns(monitorId: number): boolean {
    return this.share.owns(monitorId);
  }

  onLeadership(listener: (leading: boolean) => void): () => void {
    this.leadershipListeners.add(listener);
    return () => this.leadershipListeners.delete(listener);
  }

  onShareChange(listener: () => void): () => void {
    this.shareListeners.add(listener);
    return () => this.shareListeners.delete(listener);
  }

  status(): ClusterStatus {
    return { instance: this.me.id, region: this.me.region, leader: this.isLeader, leader_instance: this.leaderId, region_instances: [...this.share.members] };
  }

  /**
   * Registers this instance and takes the leadership if nobody holds it; throws when the database
   * cannot be reached, so a start fails loudly. Then renews every `renewMs`.
   */
  async start(): Promise<void> {
    await this.tick(true);
    this.timer = setInterval(() => void this.tickOnce(), this.timing.renewMs);
  }

  /** Gives the leadership up and leaves the membership now, so the others take over at their next renewal. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.joinTimer) clearTimeout(this.joinTimer);
    // a shutdown is bounded: a renewal stuck on a lost database is not waited for long
    if (this.ticking) await Promise.race([this.ticking, Bun.sleep(STOP_WAIT_MS)]);
    this.demote("stopping", "info");
    const leave = (async () => {
      await releaseLease(this.db, LEADER_LEASE, this.me.id);
      await removeInstance(this.db, this.me.id);
    })();
    const left = await Promise.race([leave.then(() => true), Bun.sleep(STOP_WAIT_MS).then(() => false)]).catch(() => false);
    if (!left) this.log.warn("could not leave the cluster cleanly; the others take over when this instance's lease expires");
  }

  private tickOnce(): void {
    if (this.stopped || this.ticking) return;
    // a query stuck on a dead connection must not stop the renewals: the next tick goes on without it
    let limit: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<never>((_, reject) => (limit = setTimeout(() => reject(new Error("the renewal did not answer within the lease")), this.timing.leaseMs)));
    this.ticking = Promise.race([this.tick(false), stuck])
      .catch((err) => this.failed(err))
      .finally(() => {
        clearTimeout(limit);
        this.ticking = null;
      });
  }

  private async tick(first: boolean): Promise<void> {
    const sentAt = performance.now();
    await renewInstance(this.db, this.me, this.timing.leaseMs);
    const lease = await claimLease(this.db, LEADER_LEASE, this.me.id, this.timing.leaseMs);
    const { instances } = await listLiveInstances(this.db);
    if (this.stopped) return;
    // an answer this late says nothing about now: the lease may have passed to another instance meanwhile
    if (performance.now() - sentAt > this.timing.leaseMs - this.timing.marginMs) throw new Error("the renewal answered too late to count");
    if (this.failures > 0) {
      this.log.info("this instance's lease is renewed again", { failed_renewals: this.failures });
      this.failures = 0;
    }
    this.leaderId = lease.holder;
    if (lease.holder === this.me.id) {
      this.leaderUntil = sentAt + this.timing.leaseMs - this.timing.marginMs;
      this.armDemotion();
      if (!this.isLeader) this.promote(instances.length);
    } else if (this.isLeader) {
      this.demote(`instance ${lease.holder ?? "none"} holds the lease`);
    }

    const region = instances.filter((i) => i.region === this.me.region).map((i) => i.id);
    if (first) {
      // alone in its region: nobody to hand monitors over, so it checks at once
      const others = region.filter((id) => id !== this.me.id).length;
      this.joinedAt = others === 0 ? sentAt : sentAt + this.timing.renewMs + JOIN_SLACK_MS;
      if (others > 0) {
        this.log.info("joining: the other instances of this region hand its share over first", { region: this.me.region, others });
        this.joinTimer = setTimeout(() => this.tickOnce(), this.joinedAt - performance.now());
      }
    }
    const joined = this.joinedAt !== null && performance.now() >= this.joinedAt;
    const members = joined ? [...new Set([...region, this.me.id])] : region.filter((id) => id !== this.me.id);
    const next = new Share(this.me.id, members);
    if (!next.sameAs(this.share)) {
      const before = this.share.members;
      this.share = next;
      this.log.info("share changed: the region's checks are spread over its live instances", {
        region: this.me.region,
        instances: next.members,
        joined: next.members.filter((m) => !before.includes(m)),
        left: before.filter((m) => !next.members.includes(m)),
        checking: next.members.includes(this.me.id),
      });
      for (const l of this.shareListeners) l();
    }
    if (this.isLeader && ++this.ticks % PRUNE_EVERY_TICKS === 0) {
      const pruned = await pruneInstances(this.db, PRUNE_AFTER_MS).catch(() => 0);
      if (pruned > 0) this.log.debug("forgot instances dead for an hour", { count: pruned });
    }
  }

  /** A failed renewal: the first of a run is logged, then one line every FAILURE_LOG_EVERY_MS while it lasts. */
  private failed(err: unknown): void {
    const now = performance.now();
    if (this.failures++ === 0 || now - this.failureLoggedAt >= FAILURE_LOG_EVERY_MS) {
      this.failureLoggedAt = now;
      this.log.error("renewing this instance's lease failed; it keeps checking its share meanwhile", { error: String(err), failed_renewals: this.failures });
    }
  }

  private armDemotion(): void {
    if (this.demoteTimer) clearTimeout(this.demoteTimer);
    this.demoteTimer = setTimeout(() => this.demote("the lease could not be renewed in time"), Math.max(0, this.leaderUntil - performance.now()));
  }

  private promote(instances: number): void {
    this.isLeader = true;
    this.log.info("leadership taken: this instance delivers alerts, judges heartbeat deadlines and runs maintenance", { instances });
    for (const l of this.leadershipListeners) l(true);
  }

  private demote(reason: string, level: "info" | "warn" = "warn"): void {
    if (this.demoteTimer) clearTimeout(this.demoteTimer);
    this.demoteTimer = null;
    if (!this.isLeader) return;
    this.isLeader = false;
    if (this.leaderId === this.me.id) this.leaderId = null;
    this.log[level]("leadership given up", { reason });
    for (const l of this.leadershipListeners) l(false);
  }
}
