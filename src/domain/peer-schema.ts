/**
 * A probe peer as `GET /peer/v1/peers` and `vigil peer list` show it (docs/regions.md "Peer
 * tokens"): its region, label and last contact, and whether it is connected.
 */
import { Type, type Static } from "@sinclair/typebox";
import { nullable } from "./schema-parts.ts";

/** A peer heard from within this long counts as connected. */
const CONNECTED_WITHIN_MS = 60_000;

const time = (description: string) => nullable(Type.String({ format: "date-time", description }));
const figure = (description: string) => nullable(Type.Integer({ description }));

export const PeerAttributesSchema = Type.Object({
  region: Type.String({ description: "the region its results are recorded under" }),
  label: nullable(Type.String()),
  created_at: Type.String({ format: "date-time" }),
  revoked_at: time("when `vigil peer revoke` ended it; null while it may report"),
  last_seen_at: time("its latest contact with the leader"),
  last_lag_ms: figure("at its latest batch, how old its newest result was"),
  last_skew_ms: figure("its clock minus the leader's, as last measured"),
  queue_length: figure("results waiting in its spool, as it last said"),
  connected: Type.Boolean({ description: "not revoked and heard from within the last minute" }),
});

export type PeerAttributes = Static<typeof PeerAttributesSchema>;

/** What of a stored peer its attributes come from. */
export interface PeerRecord {
  region: string;
  label: string | null;
  created_at: number;
  revoked_at: number | null;
  last_seen_at: number | null;
  last_lag_ms: number | null;
  last_skew_ms: number | null;
  queue_length: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function peerAttributes(p: PeerRecord, now: number): PeerAttributes {
  return {
    region: p.region,
    label: p.label,
    created_at: new Date(p.created_at).toISOString(),
    revoked_at: iso(p.revoked_at),
    last_seen_at: iso(p.last_seen_at),
    last_lag_ms: p.last_lag_ms,
    last_skew_ms: p.last_skew_ms,
    queue_length: p.queue_length,
    connected: p.revoked_at === null && p.last_seen_at !== null && now - p.last_seen_at <= CONNECTED_WITHIN_MS,
  };
}
