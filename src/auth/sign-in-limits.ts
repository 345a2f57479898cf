import { addressBlock } from "../lib/address-block.ts";
import { FixedWindowLimiter, type WindowVerdict } from "../lib/fixed-window.ts";

/** How long wrong passwords and wrong access tokens are remembered. */
export const GUESS_WINDOW_MS = 5 * 60_000;

/** A client address may get this many times the per-user-name limit wrong, over every user name. */
export const ADDRESS_FACTOR = 3;

export type SignInAttempt = { refused: WindowVerdict; by: "user name" | "address" } | { refused: null; succeeded(): void };

/**
 * Wrong passwords, counted per (user name, client address) and per client address, where an IPv6
 * address counts as its /64 (README "Security", Limits). Only failures count, so signing in often
 * never locks anybody out; and no count spans addresses, so guesses from one address never refuse
 * the right password from another: whoever guesses wrong is the one refused. The per-user-name
 * delay that slows guesses spread over many addresses is another rule's.
 */
export class SignInLimits {
  private readonly byPair = new FixedWindowLimiter<string>(GUESS_WINDOW_MS);
  private readonly byAddress = new FixedWindowLimiter<string>(GUESS_WINDOW_MS);

  constructor(private readonly limit: number) {}

  /**
   * Counts the attempt as a failure before the password is checked (the hash is slow, and guesses
   * sent at once must all count), or refuses it when a window is full; `succeeded` takes it back.
   */
  attempt(username: string, ip: string, now: number): SignInAttempt {
    const block = addressBlock(ip);
    const pairKey = `${username.toLowerCase()}\n${block}`;
    const pair = this.byPair.hit(pairKey, this.limit, now);
    const address = this.byAddress.hit(block, this.limit * ADDRESS_FACTOR, now);
    if (!pair.allowed || !address.allowed) {
      // a refused attempt is no failure: nothing was tried
      this.byPair.giveBack(pairKey, pair);
      this.byAddress.giveBack(block, address);
      const refused = [pair, address].filter((v) => !v.allowed).reduce((a, b) => (b.resetAt > a.resetAt ? b : a));
      return { refused, by: pair.allowed ? "address" : "user name" };
    }
    return {
      refused: null,
      succeeded: () => {
        this.byPair.giveBack(pairKey, pair);
        this.byAddress.giveBack(block, address);
      },
    };
  }
}
