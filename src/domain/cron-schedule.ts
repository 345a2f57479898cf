/**
 * Cron expressions read by croner, used only as a calculator: a paused Cron object runs nothing.
 * Heartbeat schedules take 5 or 6 fields (`auto`), maintenance windows 5 (`5-part`).
 */
import { Cron } from "croner";

export type CronFields = "auto" | "5-part";

/** The expression parsed in `timezone`; throws croner's error when it cannot be read. */
export function parseCron(expr: string, timezone: string, fields: CronFields): Cron {
  return new Cron(expr, { timezone, paused: true, mode: fields });
}

/** croner's parse error as a person reads it, without its class's prefix. */
export function cronError(err: unknown): string {
  return (err as Error).message.replace(/^CronPattern: /, "");
}

/**
 * Parsed schedules by (fields, zone, expression): every ping of a cron-scheduled heartbeat asks for
 * its next time, and a maintenance window's spans ask at every boundary and read, and parsing the
 * expression anew each time was the larger part of that. Bounded, since a Cron object is large and
 * schedules are few in practice.
 */
const calculators = new Map<string, Cron | null>();
const MAX_CALCULATORS = 128;

/** The parsed schedule, kept; null when the expression or the zone cannot be read. */
export function cronCalculator(expr: string, timezone: string, fields: CronFields): Cron | null {
  const key = `${fields}\n${timezone}\n${expr}`;
  let cron = calculators.get(key);
  if (cron !== undefined) return cron;
  try {
    cron = parseCron(expr, timezone, fields);
  } catch {
    cron = null;
  }
  if (calculators.size >= MAX_CALCULATORS) calculators.clear();
  calculators.set(key, cron);
  return cron;
}
