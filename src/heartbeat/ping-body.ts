/**
 * How much of a ping's body is read and kept (docs/heartbeats.md "Ping bodies"): a body up to
 * PING_BODY_LIMIT is accepted, its first PING_BODY_KEEP bytes read for the payload policy; a failure
 * keeps its first 10 KiB on its timeline event (apply-batch.ts).
 */
export const PING_BODY_LIMIT = 10 * 1024 * 1024;
export const PING_BODY_KEEP = 64 * 1024;
