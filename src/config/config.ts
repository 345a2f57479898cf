import type { LogLevel } from "../lib/logger.ts";

export type Plan = "free" | "pro" | "enterprise";
export type Role = "leader" | "probe";

/** The validated, frozen configuration of one `vigil serve` process. */
export interface Config {
  readonly dataDir: string;
  /** PostgreSQL's URL when the store lives there; null: SQLite under dataDir */
  readonly databaseUrl: string | null;
  readonly host: string;
  readonly port: number;
  readonly baseUrl: string;
  readonly heartbeatUrl: string;
  /**
   * whether --base-url (or --heartbeat-url) was given: without one, the dashboard's links follow the
   * address the browser used (README "Dashboard")
   */
  readonly baseUrlFixed: boolean;
  readonly heartbeatUrlFixed: boolean;
  /** host names that reach this instance: base and heartbeat URL hosts, the machine's names (lower case) */
  readonly ownHostNames: readonly string[];
  readonly region: string;
  readonly confirmations: number;
  readonly extraCaFile: string | null;
  /** --rdap-bootstrap; null: IANA's bootstrap file */
  readonly rdapBootstrapUrl: string | null;
  /** --domain-resolver: the DNS server custom domains are verified with; null: the system's (README "Custom domains") */
  readonly domainResolver: string | null;
  readonly rateLimits: Readonly<Record<Plan, number>>;
  /** --smtp-url: status page subscriptions are offered and mailed only when set (README "Status pages") */
  readonly smtpUrl: string | null;
  readonly smtpFrom: string;
  /** --status-mail-period in ms: how long a page's incident changes gather before they are mailed */
  readonly statusMailPeriodMs: number;
  readonly pingLimitToken: number;
  readonly pingLimitIp: number;
  /** wrong passwords per (user name, client address) and wrong access tokens per client address, in 5 minutes */
  readonly guessLimit: number;
  /** dashboard form submissions per minute per user and account */
  readonly webWriteLimit: number;
  readonly trustedProxies: readonly string[];
  readonly logLevel: LogLevel;
  readonly role: Role;
  readonly leaderUrl: string | null;
  readonly peerToken: string | null;
  readonly maxConcurrentChecks: number;
  /** checks of one account in flight at once while several accounts' monitors are checked here */
  readonly maxConcurrentChecksPerAccount: number;
  readonly retentionDays: number;
  /** results per minute a peer may send on top of twice its monitors' own rate */
  readonly peerResultLimit: number;
  /** --trace-budget-mib in bytes: synthetic trace an account may store per hour (engine/trace-budget.ts) */
  readonly traceBudgetBytes: number;
  readonly blockPrivateTargets: boolean;
  readonly metricsPublic: boolean;
  /** Bun's idleTimeout: a connection silent (or a request unanswered) this long is closed */
  readonly idleTimeoutSec: number;
  /** how long one batch of a check's patterns may match on the pattern worker (scheduler/pattern-thread.ts) */
  readonly patternTimeLimitMs: number;
  /** VIGIL_SECRET_KEY, when set; otherwise <data>/secret.key is used */
  readonly secretKey: string | null;
}

export class ConfigError extends Error {}
