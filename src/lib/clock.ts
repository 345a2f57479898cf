/**
 * Time comes through a Clock passed down from main, so time-based rules can be driven by tests.
 */
export interface Clock {
  /** epoch milliseconds */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
