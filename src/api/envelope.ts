/**
 * Response envelopes (docs/api-rules.md "Resources and envelopes").
 * `meta` is added by the pipeline, so handlers never forget request_id or rate_limit.
 */
export type ResourceType = "monitor" | "check" | "incident" | "status_page" | "event" | "notification_channel" | "alert" | "peer" | "maintenance_window" | "group" | "status_page_update";

export interface Resource<A = Record<string, unknown>> {
  id: string;
  type: ResourceType;
  attributes: A;
}

export function resource<A>(type: ResourceType, id: number | string, attributes: A): Resource<A> {
  return { id: String(id), type, attributes };
}

export interface Pagination {
  page: number;
  per_page: number;
  total: number;
  total_pages: number;
}

export function pagination(page: number, perPage: number, total: number): Pagination {
  return { page, per_page: perPage, total, total_pages: total === 0 ? 0 : Math.ceil(total / perPage) };
}

export function single<A>(type: ResourceType, id: number | string, attributes: A, status = 200) {
  return { status, body: { data: resource(type, id, attributes) } };
}

export function list<A>(items: Resource<A>[], page: number, perPage: number, total: number) {
  return { body: { data: items, pagination: pagination(page, perPage, total) } };
}
