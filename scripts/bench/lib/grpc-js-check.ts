/**
 * The grpc-clients bench's second candidate: the same Health/Check call made with @grpc/grpc-js
 * (a dev dependency, used in Vigil only by the tests' health server), one channel per check and
 * closed after it as the probe does, the messages coded by src/probes/grpc-wire.ts so both
 * candidates differ only in the transport.
 */
import * as grpc from "@grpc/grpc-js";
import { rootCertificates } from "node:tls";
import { HEALTH_CHECK_PATH, healthCheckRequest, readHealthCheckResponse, servingStatusName, grpcStatusName } from "../../../src/probes/grpc-wire.ts";

export interface GrpcJsCheck {
  /** the judged IP the channel connects to */
  ip: string;
  port: number;
  /** the name for :authority and the certificate */
  host: string;
  service: string;
  tls: boolean;
  /** PEM trusted beside the system roots, as the probe trusts --extra-ca */
  ca?: string;
  timeoutMs: number;
}

const framed = (message: Buffer) => {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

/** "SERVING", another serving status, or the gRPC error's name and message. */
export function grpcJsCheck(c: GrpcJsCheck): Promise<string> {
  const authority = `${c.host}:${c.port}`;
  const options: grpc.ChannelOptions = {
    "grpc.default_authority": authority,
    // an environment proxy would send the check elsewhere than the judged address
    "grpc.enable_http_proxy": 0,
    ...(c.tls ? { "grpc.ssl_target_name_override": c.host } : {}),
  };
  // grpc-js's root certificates replace the system's, so the extra CA goes with them
  const roots = c.ca ? Buffer.from([...rootCertificates, c.ca].join("\n")) : null;
  const credentials = c.tls ? grpc.credentials.createSsl(roots) : grpc.credentials.createInsecure();
  const client = new grpc.Client(`ipv4:${c.ip}:${c.port}`, credentials, options);
  return new Promise<string>((resolve) => {
    client.makeUnaryRequest<string, number | string>(
      HEALTH_CHECK_PATH,
      (service) => healthCheckRequest(service).subarray(5),
      (bytes) => {
        const read = readHealthCheckResponse(framed(bytes));
        return "problem" in read ? read.problem : read.status;
      },
      c.service,
      new grpc.Metadata(),
      { deadline: Date.now() + c.timeoutMs },
      (err, value) => {
        client.close();
        if (err) resolve(`${grpcStatusName(err.code)}: ${err.details}`);
        else resolve(typeof value === "number" ? servingStatusName(value) : String(value));
      },
    );
  });
}
