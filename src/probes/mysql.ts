/**
 * Placeholder of the mysql probe on the branch that adds the type's plumbing: the probe itself is
 * written beside it and replaces this file. Until then a mysql check is down, saying so.
 */
import { failed } from "../domain/check-result.ts";
import type { Probe } from "./types.ts";

export const mysqlProbe: Probe = async (_m, ctx) => failed(ctx.now(), "internal_error", "the MySQL check is not built into this version");
