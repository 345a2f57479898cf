/**
 * The public API v1 as export and apply use it (docs/api-rules.md): a Bearer token, every page of
 * a list, writes as flat JSON, and the account's rate limit respected by waiting out a 429's
 * Retry-After, so a large file is applied in several windows instead of failing half-way.
 */
export interface ApiRecord {
  id: number;
  attributes: Record<string, unknown>;
}

/** An answer other than success: the API's error code, message and 422 details. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string[]> | null,
  ) {
    super(message);
  }
}

const MAX_RATE_LIMIT_WAITS = 1000;

export class ApiClient {
  private readonly base: string;

  constructor(
    server: string,
    private readonly token: string,
    /** told of each wait for the rate limit */
    private readonly onWait: (seconds: number) => void = () => {},
  ) {
    this.base = server.replace(/\/+$/, "") + "/api/v1";
  }

  /** Every record of a list, page by page (100 each, the most a page holds). */
  async list(path: string): Promise<ApiRecord[]> {
    const out: ApiRecord[] = [];
    for (let page = 1; ; page++) {
      const body = (await this.call("GET", `/${path}?per_page=100&page=${page}`)) as { data: { id: string; attributes: Record<string, unknown> }[]; pagination: { total_pages: number } };
      for (const r of body.data) out.push({ id: Number(r.id), attributes: r.attributes });
      if (page >= body.pagination.total_pages) return out;
    }
  }

  async create(path: string, attributes: Record<string, unknown>): Promise<ApiRecord> {
    return recordOf(await this.call("POST", `/${path}`, attributes));
  }

  async update(path: string, id: number, attributes: Record<string, unknown>): Promise<ApiRecord> {
    return recordOf(await this.call("PATCH", `/${path}/${id}`, attributes));
  }

  async remove(path: string, id: number): Promise<void> {
    await this.call("DELETE", `/${path}/${id}`);
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    for (let waits = 0; ; waits++) {
      let res: Response;
      try {
        res = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (e) {
        throw new ApiCallError(0, "unreachable", `cannot reach ${this.base}: ${(e as Error).message}`, null);
      }
      const text = await res.text();
      let json: { error?: { code?: string; message?: string; details?: Record<string, string[]> } } | null = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {}
      if (res.status === 429 && waits < MAX_RATE_LIMIT_WAITS) {
        const seconds = Math.max(1, Number(res.headers.get("retry-after")) || 1);
        this.onWait(seconds);
        await Bun.sleep(seconds * 1000);
        continue;
      }
      if (res.ok && json) return json;
      const err = json?.error;
      throw new ApiCallError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? `${method} ${path} answered ${res.status}`, err?.details ?? null);
    }
  }
}

function recordOf(body: unknown): ApiRecord {
  const d = (body as { data: { id: string; attributes: Record<string, unknown> } }).data;
  return { id: Number(d.id), attributes: d.attributes };
}
