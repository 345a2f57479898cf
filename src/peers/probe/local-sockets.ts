/**
 * What a probe peer runs in place of the leader's probe table: the same probes, but a docker
 * monitor that asks Docker over a unix socket this machine lacks is answered `docker_error` at once,
 * naming the socket. The socket is a machine's own; the leader leaves such a result out of the
 * quorum (docs/regions.md "Monitor types on probes").
 */
import { existsSync } from "node:fs";
import { failed } from "../../domain/check-result.ts";
import { dockerSocketPath } from "../../domain/monitor-targets.ts";
import { DEFAULT_PROBES, type ProbeTable } from "../../scheduler/run-check.ts";

export function probePeerTable(region: string, base: ProbeTable = DEFAULT_PROBES): ProbeTable {
  const docker = base.byType.docker;
  if (!docker) return base;
  return {
    ...base,
    byType: {
      ...base.byType,
      docker: async (m, ctx) => {
        const socket = dockerSocketPath(m.docker_host);
        if (socket !== null && !existsSync(socket)) {
          return failed(ctx.now(), "docker_error", `this probe (region ${region}) has no Docker socket at ${socket}, so this region does not count toward the monitor's state`);
        }
        return docker(m, ctx);
      },
    },
  };
}
