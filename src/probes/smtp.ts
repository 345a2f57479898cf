/**
 * Placeholder of the smtp probe on the branch that adds the type's plumbing: the probe itself is
 * written beside it and replaces this file. Until then a smtp check is down, saying so.
 */
import { failed } from "../domain/check-result.ts";
import type { Probe } from "./types.ts";

export const smtpProbe: Probe = async (_m, ctx) => failed(ctx.now(), "internal_error", "the SMTP check is not built into this version");
