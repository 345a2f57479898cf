import type { RouteDef } from "./route.ts";

/** Every /api/v1 endpoint, in the order the OpenAPI document lists them. */
export const apiRoutes: RouteDef[] = [];
