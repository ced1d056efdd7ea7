/** What every route module is mounted with. */
import type { Logger } from "../../log.ts";
import type { HttpLimits } from "../http-edge.ts";
import type { DaemonMetrics } from "../metrics.ts";
import type { SessionService } from "../service.ts";

export interface RouteContext {
  service: SessionService;
  limits: HttpLimits;
  metrics: DaemonMetrics;
  /** Where unexpected errors go, whole. */
  logger: Logger;
}
