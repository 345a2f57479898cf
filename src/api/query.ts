import { parseDateParam } from "../lib/dates.ts";
import { DetailsCollector } from "../http/errors.ts";

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

/**
 * Reads query parameters by docs/api-rules.md "Query parameters" and "Paging and sorting":
 * per_page above 100 clamps to 100; a non-integer or a value below 1 is a 422; enum and date
 * failures are a 422 on that parameter. Every problem is collected so one response names them all;
 * call `done()` last.
 */
export class QueryReader {
  private readonly errors = new DetailsCollector();
  constructor(private readonly params: URLSearchParams) {}

  private raw(name: string): string | undefined {
    const v = this.params.get(name);
    return v === null ? undefined : v;
  }

  string(name: string, maxLength = 200): string | undefined {
    const v = this.raw(name);
    if (v === undefined || v === "") return undefined;
    if (v.length > maxLength) this.errors.add(name, `must be at most ${maxLength} characters`);
    return v.slice(0, maxLength);
  }

  /** Every non-empty value of a repeatable parameter (`?tag=a&tag=b`), at most `max`, each checked by `problem`. */
  repeated(name: string, max: number, problem: (v: string) => string | null): string[] {
    const out: string[] = [];
    const given = this.params.getAll(name);
    if (given.length > max) this.errors.add(name, `may be given at most ${max} times`);
    for (const v of given.slice(0, max)) {
      if (v === "") continue;
      const p = problem(v);
      if (p) this.errors.add(name, p);
      else out.push(v);
    }
    return out;
  }

  positiveInt(name: string): number | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (!/^\d{1,15}$/.test(v) || Number(v) < 1) {
      this.errors.add(name, "must be an integer of at least 1");
      return undefined;
    }
    return Number(v);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.raw(name);
    if (v === undefined || v === "") return undefined;
    if (!(allowed as readonly string[]).includes(v)) {
      this.errors.add(name, `must be one of ${allowed.join(", ")}`);
      return undefined;
    }
    return v as T;
  }

  bool(name: string): boolean | undefined {
    const v = this.raw(name);
    if (v === undefined || v === "") return undefined;
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    this.errors.add(name, "must be true or false");
    return undefined;
  }

  date(name: string): number | undefined {
    const v = this.raw(name);
    if (v === undefined || v === "") return undefined;
    const ms = parseDateParam(v);
    if (ms === null) {
      this.errors.add(name, "must be an ISO 8601 date (2026-11-21), date-time with Z or an offset, or epoch seconds");
      return undefined;
    }
    return ms;
  }

  page(): { page: number; perPage: number; offset: number } {
    const page = this.positiveInt("page") ?? 1;
    const perPage = Math.min(this.positiveInt("per_page") ?? DEFAULT_PER_PAGE, MAX_PER_PAGE);
    return { page, perPage, offset: (page - 1) * perPage };
  }

  /** Throws the 422 when any parameter was bad. */
  done(): void {
    this.errors.throwIfAny();
  }
}
