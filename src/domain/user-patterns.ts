/**
 * The regular expressions users write: a JSON assertion's `regex` op and a synthetic step's
 * `regex` extract (README "Regular expressions"). Every one of them goes through this module.
 *
 * They are RE2 patterns run by re2js, whose matching takes time linear in the text: JavaScript's
 * own engine backtracks, and a few nested repeats against a short answer held the serving thread
 * for seconds. What RE2 cannot match in linear time (backreferences, lookarounds) is refused when
 * the monitor is written. Linear is not short on a 4 MiB body, so checks match on a worker with
 * the check's deadline (scheduler/pattern-thread.ts); this module is the engine both threads use.
 */
import { RE2JS } from "re2js";

/**
 * How large the compiled programs of one attribute's patterns may be together, in RE2
 * instructions. A repeat such as `(?:ab|cd){1000}` is copied out when compiled, so a short pattern
 * can cost a large program, and compiling one takes time on the thread that validates the write.
 */
export const PATTERN_BUDGET = 20_000;

/** Compiled patterns kept by one matcher, most recently used last. */
const KEPT_PATTERNS = 1000;

export type PatternVerdict = { ok: true; size: number } | { ok: false; reason: string };

/** Compiles `source` as RE2 would: its program's size, or why it cannot be run. */
export function examinePattern(source: string): PatternVerdict {
  try {
    return { ok: true, size: RE2JS.compile(source).programSize() };
  } catch (err) {
    return { ok: false, reason: reasonOf(err) };
  }
}

/** "error parsing regexp: invalid escape sequence: `\1`" → "invalid escape sequence: `\1`" */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^error parsing regexp: /, "");
}

/**
 * An upper bound, within a small factor, of the instructions `source` compiles to, read from its
 * text without compiling: every atom counts once per copy its enclosing counted repeats make.
 * Compiling is what costs (a 1,000-character pattern of repeats took a second), so a pattern whose
 * bound is over the budget is refused before it is compiled. Syntax is left to the engine.
 */
function expansionBound(source: string): number {
  const groups: number[] = [0];
  let last = 0; // the weight of the atom or group just read, which a repeat applies to
  const add = (w: number) => {
    groups[groups.length - 1]! += w;
    last = w;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const next = source[i + 1];
      i++;
      // \p{Greek}, \x{263a}: one atom with its braces
      if ((next === "p" || next === "P" || next === "x") && source[i + 1] === "{") i = Math.max(i, source.indexOf("}", i));
      else if (next === "p" || next === "P") i++;
      add(1);
    } else if (c === "[") {
      let j = i + 1;
      if (source[j] === "^") j++;
      if (source[j] === "]") j++;
      for (; j < source.length && source[j] !== "]"; j++) {
        if (source[j] === "\\") j++;
        else if (source[j] === "[" && source[j + 1] === ":") j = Math.max(j, source.indexOf(":]", j + 2) + 1);
      }
      i = j;
      add(1);
    } else if (c === "(") {
      groups.push(0);
    } else if (c === ")") {
      const inner = groups.length > 1 ? groups.pop()! : 0;
      add(inner + 2);
    } else if (c === "{") {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 16));
      if (!m) {
        add(1);
        continue;
      }
      const copies = Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0, 1);
      const grown = last * copies + copies;
      groups[groups.length - 1]! += grown - last;
      last = grown;
      i += m[0].length - 1;
    } else if (c === "*" || c === "+" || c === "?" || c === "|") {
      groups[groups.length - 1]! += 2;
    } else {
      add(1);
    }
  }
  return groups.reduce((a, b) => a + b, 0);
}

/**
 * The write-time rule for the patterns of one attribute, in order: each must compile, and together
 * they stay within PATTERN_BUDGET. Once the budget is spent, later patterns are not compiled (the
 * write is refused already), and a pattern whose bound (expansionBound) is over the budget is
 * refused uncompiled, so validating a write compiles a bounded amount.
 */
export class PatternBudget {
  private used = 0;

  constructor(private readonly limit = PATTERN_BUDGET) {}

  /** Why `source` is refused (a sentence to follow "value " or "path "), or null. */
  problem(source: string): string | null {
    if (this.used > this.limit) return null;
    const bound = expansionBound(source);
    // the bound is over the real size by up to about twice: room for that before refusing uncompiled
    if (this.used + bound > this.limit * 2) {
      this.used = this.limit + 1;
      return `makes the patterns too large: its repeats make about ${bound} RE2 instructions, and the patterns of one attribute may compile to ${this.limit} together (a repeat such as {1000} is copied out when compiled)`;
    }
    const v = examinePattern(source);
    if (!v.ok) return `is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): ${v.reason}`;
    this.used += v.size;
    if (this.used <= this.limit) return null;
    return `makes the patterns too large: with those before it they compile to ${this.used} RE2 instructions, more than ${this.limit} (a repeat such as {1000} is copied out when compiled)`;
  }
}

/** One match to make: `pattern` against `texts[text]` of its batch. */
export interface PatternJob {
  pattern: string;
  text: number;
  /** test: whether it matches anywhere; group: the first match's first group (the whole match without one) */
  want: "test" | "group";
}

/** Texts are listed once and jobs point at them, so fifty rules on one body send the body once. */
export interface PatternBatch {
  texts: string[];
  jobs: PatternJob[];
}

export type PatternOutcome = { matched: boolean; group: string | null } | { refused: string };

/** What runs a check's batch of patterns: the worker on a server, or the calling thread. */
export interface PatternMatcher {
  /** Rejects when `signal` fires first (the check's deadline) or the matcher fails. */
  run(batch: PatternBatch, signal: AbortSignal): Promise<PatternOutcome[]>;
}

/** Compiled patterns by source, the least recently used dropped past KEPT_PATTERNS. */
export class CompiledPatterns {
  private readonly kept = new Map<string, RE2JS | string>();

  /** The compiled pattern, or why it cannot be (a pattern stored before this engine refused it). */
  get(source: string): RE2JS | string {
    let re = this.kept.get(source);
    if (re !== undefined) this.kept.delete(source);
    else {
      try {
        re = RE2JS.compile(source);
      } catch (err) {
        re = reasonOf(err);
      }
      if (this.kept.size >= KEPT_PATTERNS) this.kept.delete(this.kept.keys().next().value!);
    }
    this.kept.set(source, re);
    return re;
  }
}

export function runPatternBatch(batch: PatternBatch, compiled: CompiledPatterns): PatternOutcome[] {
  return batch.jobs.map((job) => {
    const re = compiled.get(job.pattern);
    if (typeof re === "string") return { refused: re };
    const text = batch.texts[job.text] ?? "";
    if (job.want === "test") return { matched: re.test(text), group: null };
    const m = re.matcher(text);
    if (!m.find()) return { matched: false, group: null };
    return { matched: true, group: (re.groupCount() > 0 ? m.group(1) : null) ?? m.group(0) };
  });
}

/**
 * A test for `source` on the calling thread, or why it cannot be compiled: for patterns Vigil
 * builds from a user's text on a command line (an imported Gatus glob), matched against short text.
 */
export function patternTester(source: string): ((text: string) => boolean) | string {
  const re = new CompiledPatterns().get(source);
  return typeof re === "string" ? re : (text) => re.test(text);
}

/** Matching on the calling thread: for tools and tests that run a probe without a server. */
export function matchOnThisThread(): PatternMatcher {
  const compiled = new CompiledPatterns();
  return {
    run: (batch, signal) => (signal.aborted ? Promise.reject(new Error("the check ended before its patterns were matched")) : Promise.resolve(runPatternBatch(batch, compiled))),
  };
}
