/**
 * Which instance of a region checks a monitor: rendezvous (highest random weight) hashing of the
 * monitor id over the region's live instance ids. Every instance computes it alone from the same
 * membership and gets the same answer; when an instance joins or leaves, only the monitors it gains
 * or held move, about 1/n of them, and nobody else's change hands.
 *
 * The hash is spelled out here rather than taken from the runtime (Bun.hash), so instances of
 * different builds during a rolling upgrade still agree.
 */

/** FNV-1a over the id's characters, then a murmur3 finaliser so near-identical ids spread apart. */
function hashInstance(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return mix(h);
}

function mix(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** The weight of (instance, monitor): both hashes combined and mixed once more. */
function weight(instanceHash: number, monitorId: number): number {
  return mix(instanceHash ^ mix(monitorId + 0x9e3779b9));
}

/**
 * One region's membership as an instance sees it, and the monitors each member checks.
 *
 * @example
 *   const share = new Share("b1", ["a7", "b1", "c3"]);
 *   share.owns(42); // true on exactly one of the three instances
 */
export class Share {
  /** the members, sorted, each with its hash computed once */
  readonly members: readonly string[];
  private readonly hashes: number[];
  private readonly selfIndex: number;

  constructor(
    readonly self: string,
    members: readonly string[],
  ) {
    this.members = [...new Set(members)].sort();
    this.hashes = this.members.map(hashInstance);
    this.selfIndex = this.members.indexOf(self);
  }

  /** The member that checks `monitorId`, or null when there is none. */
  ownerOf(monitorId: number): string | null {
    let best = -1;
    let bestWeight = -1;
    for (let i = 0; i < this.hashes.length; i++) {
      const w = weight(this.hashes[i]!, monitorId);
      // a tie (2^-32) goes to the lower id, the same on every instance
      if (w > bestWeight) {
        best = i;
        bestWeight = w;
      }
    }
    return best < 0 ? null : this.members[best]!;
  }

  /** Whether this instance checks `monitorId`: never while it is not a member itself. */
  owns(monitorId: number): boolean {
    if (this.selfIndex < 0) return false;
    if (this.hashes.length === 1) return true;
    return this.ownerOf(monitorId) === this.self;
  }

  /** Same members as `other`. */
  sameAs(other: Share): boolean {
    return this.self === other.self && this.members.length === other.members.length && this.members.every((m, i) => m === other.members[i]);
  }
}
