import { checkRoutes } from "./checks.ts";
import { eventRoutes } from "./events.ts";
import { groupRoutes } from "./groups.ts";
import { incidentRoutes } from "./incidents.ts";
import { maintenanceWindowRoutes } from "./maintenance-windows.ts";
import { monitorRoutes } from "./monitors.ts";
import { notificationChannelRoutes } from "./notification-channels.ts";
import { peerRoutes } from "./peers.ts";
import type { RouteDef } from "./route.ts";
import { statusPageUpdateRoutes } from "./status-page-updates.ts";
import { statusPageRoutes } from "./status-pages.ts";

/**
 * Every endpoint an API token opens besides /metrics, in the order the OpenAPI document lists them:
 * the /api/v1 resources, and the peers list beside the peer protocol.
 */
export const apiRoutes: RouteDef[] = [...monitorRoutes, ...checkRoutes, ...eventRoutes, ...incidentRoutes, ...statusPageRoutes, ...statusPageUpdateRoutes, ...notificationChannelRoutes, ...maintenanceWindowRoutes, ...groupRoutes, ...peerRoutes];
