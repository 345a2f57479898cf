/**
 * TLS for the postgres and mysql probes (db_tls), through Bun's SQL client: the connection goes to
 * the judged IP while the certificate is checked against the target's name (sent as SNI when it
 * is a name), trusting the system roots plus --extra-ca, or nothing checked when tls_verify is off.
 * The client shows the server's certificate only to a verifying connection, in the identity check,
 * which is where its notAfter is read; with tls_verify off no notAfter is recorded.
 */
import { identityError } from "../net/peer-certificate.ts";
import { certNotAfter, sniFor, trustedCas } from "../net/tls-options.ts";

export interface SeenCertificate {
  notAfter: number | null;
}

export function sqlTlsOptions(host: string, verify: boolean, extraCa: string | undefined, seen: SeenCertificate): Bun.SQL.TLSOptions {
  if (!verify) return { rejectUnauthorized: false, serverName: sniFor(host) };
  return {
    rejectUnauthorized: true,
    serverName: sniFor(host),
    ca: trustedCas(extraCa),
    checkServerIdentity: (_name, cert) => {
      seen.notAfter = certNotAfter(cert);
      return identityError(host, cert);
    },
  };
}
