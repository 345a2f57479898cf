/**
 * Placeholder of the postgres probe on the branch that adds the type's plumbing: the probe itself is
 * written beside it and replaces this file. Until then a postgres check is down, saying so.
 */
import { failed } from "../domain/check-result.ts";
import type { Probe } from "./types.ts";

export const postgresProbe: Probe = async (_m, ctx) => failed(ctx.now(), "internal_error", "the PostgreSQL check is not built into this version");
