/**
 * Every option of `vigil serve`, with its flag, env variable, default and help text. The README's
 * "Configuration" table is this list.
 */
export type OptionKind = "string" | "int" | "bool" | "list";

export interface OptionSpec {
  flag: string;
  env: string;
  kind: OptionKind;
  /** default as text, or null for none; `port`-derived defaults are filled in by load.ts */
  fallback: string | null;
  help: string;
}

export const SERVE_OPTIONS = {
  data: { flag: "data", env: "VIGIL_DATA", kind: "string", fallback: "./data", help: "data directory (SQLite database, secret key, bootstrap token)" },
  databaseUrl: { flag: "database-url", env: "VIGIL_DATABASE_URL", kind: "string", fallback: null, help: "postgres://user:password@host:port/database: keep everything in PostgreSQL 13+ instead of SQLite under --data (README, PostgreSQL)" },
  host: { flag: "host", env: "VIGIL_HOST", kind: "string", fallback: "0.0.0.0", help: "address to listen on" },
  port: { flag: "port", env: "VIGIL_PORT", kind: "int", fallback: "8080", help: "port to listen on (0 picks a free one)" },
  baseUrl: { flag: "base-url", env: "VIGIL_BASE_URL", kind: "string", fallback: null, help: "fixed public address of this instance (default: links follow the address the browser used; alerts say http://localhost:<port>)" },
  heartbeatUrl: { flag: "heartbeat-url", env: "VIGIL_HEARTBEAT_URL", kind: "string", fallback: null, help: "public address of the ping endpoint (default: the base url)" },
  region: { flag: "region", env: "VIGIL_REGION", kind: "string", fallback: "local", help: "region name of the checks this instance runs" },
  confirmations: { flag: "confirmations", env: "VIGIL_CONFIRMATIONS", kind: "int", fallback: "2", help: "consecutive down checks before a region counts as down" },
  smtpUrl: { flag: "smtp-url", env: "VIGIL_SMTP_URL", kind: "string", fallback: null, help: "smtp://user:password@host:port (smtps:// for TLS from the first byte): mail server status page subscriptions are sent through, with --base-url set too; unset: no subscriptions" },
  smtpFrom: { flag: "smtp-from", env: "VIGIL_SMTP_FROM", kind: "string", fallback: null, help: "From address of subscription mail (default: vigil@ the base url's host)" },
  statusMailPeriod: { flag: "status-mail-period", env: "VIGIL_STATUS_MAIL_PERIOD", kind: "int", fallback: "300", help: "seconds incidents on a status page's monitors are gathered before subscribers are mailed: at most one such mail per page and subscriber in that time, with the latest state of each monitor that changed (0: at the next pass, about a second)" },
  rdapBootstrap: { flag: "rdap-bootstrap", env: "VIGIL_RDAP_BOOTSTRAP", kind: "string", fallback: null, help: "URL of the RDAP bootstrap file domain monitors find registries in (default IANA's, https://data.iana.org/rdap/dns.json)" },
  domainResolver: { flag: "domain-resolver", env: "VIGIL_DOMAIN_RESOLVER", kind: "string", fallback: null, help: "DNS server (ip or ip:port) asked for the TXT records that verify status pages' custom domains (default: the system's resolvers)" },
  extraCa: { flag: "extra-ca", env: "VIGIL_EXTRA_CA", kind: "string", fallback: null, help: "PEM file of roots trusted in addition to the system's" },
  rateLimit: { flag: "rate-limit", env: "VIGIL_RATE_LIMIT", kind: "string", fallback: "pro=120,enterprise=300", help: "API requests per minute per plan" },
  pingLimitToken: { flag: "ping-limit-token", env: "VIGIL_PING_LIMIT_TOKEN", kind: "int", fallback: "60", help: "heartbeat pings per minute per token" },
  pingLimitIp: { flag: "ping-limit-ip", env: "VIGIL_PING_LIMIT_IP", kind: "int", fallback: "600", help: "heartbeat pings per minute per source address (an IPv6 address's /64)" },
  guessLimit: { flag: "guess-limit", env: "VIGIL_GUESS_LIMIT", kind: "int", fallback: "10", help: "wrong passwords per user name and client address, and wrong status page access tokens per client address, in 5 minutes; past it that client is refused until the 5 minutes are over. A client address may get 3 times as many passwords wrong over every user name; an IPv6 address counts as its /64" },
  webWriteLimit: { flag: "web-write-limit", env: "VIGIL_WEB_WRITE_LIMIT", kind: "int", fallback: "120", help: "dashboard form submissions per minute per user and account; over it 429" },
  trustedProxy: { flag: "trusted-proxy", env: "VIGIL_TRUSTED_PROXY", kind: "list", fallback: "", help: "comma-separated proxy addresses or CIDR ranges whose X-Forwarded-For, -Host and -Proto are honoured" },
  logLevel: { flag: "log-level", env: "VIGIL_LOG_LEVEL", kind: "string", fallback: "info", help: "debug, info, warn, error or silent" },
  role: { flag: "role", env: "VIGIL_ROLE", kind: "string", fallback: "leader", help: "leader, or probe (runs checks for a leader)" },
  leader: { flag: "leader", env: "VIGIL_LEADER", kind: "string", fallback: null, help: "probe role: the leader's base URL" },
  peerToken: { flag: "peer-token", env: "VIGIL_PEER_TOKEN", kind: "string", fallback: null, help: "probe role: the peer token from `vigil peer create`" },
  maxConcurrentChecks: { flag: "max-concurrent-checks", env: "VIGIL_MAX_CONCURRENT_CHECKS", kind: "int", fallback: "500", help: "checks in flight at once" },
  maxConcurrentChecksPerAccount: { flag: "max-concurrent-checks-per-account", env: "VIGIL_MAX_CONCURRENT_CHECKS_PER_ACCOUNT", kind: "int", fallback: null, help: "checks of one account in flight at once while this instance checks the monitors of several accounts (default: half of --max-concurrent-checks, rounded up); the rest stay free for the others" },
  peerResultLimit: { flag: "peer-result-limit", env: "VIGIL_PEER_RESULT_LIMIT", kind: "int", fallback: "3000", help: "results per minute a probe peer may deliver beyond twice what its monitors produce (room for a backlog)" },
  traceBudgetMib: { flag: "trace-budget-mib", env: "VIGIL_TRACE_BUDGET_MIB", kind: "int", fallback: "16", help: "MiB of synthetic check traces each account may store per hour on this instance; past it a trace keeps only its steps' outline (see the README, Security)" },
  retentionDays: { flag: "retention-days", env: "VIGIL_RETENTION_DAYS", kind: "int", fallback: "30", help: "days raw checks are kept (rollups are kept 400 days)" },
  blockPrivateTargets: { flag: "block-private-targets", env: "VIGIL_BLOCK_PRIVATE_TARGETS", kind: "bool", fallback: "false", help: "the private-target rule of accounts that set none of their own: refuse checks and notifications to private, loopback and link-local addresses (see the README, Security)" },
  idleTimeout: { flag: "idle-timeout", env: "VIGIL_IDLE_TIMEOUT", kind: "int", fallback: "30", help: "seconds a request may take to arrive and be answered before its connection is closed (slow clients), 1-255" },
  patternTimeLimitMs: { flag: "pattern-time-limit-ms", env: "VIGIL_PATTERN_TIME_LIMIT_MS", kind: "int", fallback: "2000", help: "ms one check's batch of regular expressions may match on the pattern worker before the check fails, 100-60000 (see the README, Regular expressions)" },
  metricsPublic: { flag: "metrics-public", env: "VIGIL_METRICS_PUBLIC", kind: "bool", fallback: "false", help: "serve /metrics without a token" },
} as const satisfies Record<string, OptionSpec>;

export type ServeOptionName = keyof typeof SERVE_OPTIONS;
