import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { LOG_LEVELS, type LogLevel } from "../lib/logger.ts";
import { ConfigError, type Config, type Plan, type Role } from "./config.ts";
import { ownHostNames } from "./host-names.ts";
import { isProxyEntry } from "../lib/trusted-proxies.ts";
import { SERVE_OPTIONS, type OptionSpec, type ServeOptionName } from "./options.ts";

export type Env = Record<string, string | undefined>;

/**
 * Reads `vigil serve` flags and VIGIL_* env once; flags win over env (README "Configuration").
 * This and cli/ are the only readers of process.env: everything else receives the frozen Config.
 */
export function loadConfig(argv: string[], env: Env): Config {
  const parsed = parseFlags(argv);
  const raw = (name: ServeOptionName): string | null => {
    const spec: OptionSpec = SERVE_OPTIONS[name];
    const fromFlag = parsed[spec.flag];
    if (fromFlag !== undefined) return fromFlag;
    const fromEnv = env[spec.env];
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
    return spec.fallback;
  };
  const port = int(raw("port"), "port", 0, 65535);
  const baseUrl = url(raw("baseUrl") ?? `http://localhost:${port}`, "base-url");
  const logLevel = raw("logLevel")!;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  const role = raw("role")!;
  if (role !== "leader" && role !== "probe") throw new ConfigError(`--role must be leader or probe, got "${role}"`);
  const leaderUrl = raw("leader");
  const peerToken = raw("peerToken");
  if (role === "probe" && (!leaderUrl || !peerToken)) throw new ConfigError("--role probe needs --leader URL and --peer-token TOKEN");
  const heartbeatUrl = stripSlash(url(raw("heartbeatUrl") ?? baseUrl, "heartbeat-url"));
  const region = raw("region")!;
  if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(region)) throw new ConfigError(`--region must be 1-63 letters, digits, - or _, got "${region}"`);
  const maxConcurrentChecks = int(raw("maxConcurrentChecks"), "max-concurrent-checks", 1, 100_000);
  const perAccount = raw("maxConcurrentChecksPerAccount");
  return Object.freeze({
    dataDir: raw("data")!,
    databaseUrl: databaseUrl(raw("databaseUrl")),
    host: raw("host")!,
    port,
    baseUrl: stripSlash(baseUrl),
    heartbeatUrl,
    baseUrlFixed: raw("baseUrl") !== null,
    heartbeatUrlFixed: raw("heartbeatUrl") !== null || raw("baseUrl") !== null,
    ownHostNames: Object.freeze(ownHostNames([baseUrl, heartbeatUrl])),
    region,
    confirmations: int(raw("confirmations"), "confirmations", 1, 100),
    extraCaFile: raw("extraCa"),
    rdapBootstrapUrl: optionalUrl(raw("rdapBootstrap"), "rdap-bootstrap"),
    domainResolver: resolverAddress(raw("domainResolver")),
    rateLimits: Object.freeze(parseRateLimits(raw("rateLimit")!)),
    smtpUrl: smtpUrl(raw("smtpUrl")),
    smtpFrom: raw("smtpFrom") ?? `vigil@${new URL(baseUrl).hostname}`,
    statusMailPeriodMs: int(raw("statusMailPeriod"), "status-mail-period", 0, 86_400) * 1000,
    pingLimitToken: int(raw("pingLimitToken"), "ping-limit-token", 1, 1_000_000),
    pingLimitIp: int(raw("pingLimitIp"), "ping-limit-ip", 1, 10_000_000),
    guessLimit: int(raw("guessLimit"), "guess-limit", 1, 10_000),
    webWriteLimit: int(raw("webWriteLimit"), "web-write-limit", 1, 1_000_000),
    trustedProxies: Object.freeze(proxies(list(raw("trustedProxy")))),
    logLevel: logLevel as LogLevel,
    role: role as Role,
    leaderUrl: leaderUrl ? stripSlash(url(leaderUrl, "leader")) : null,
    peerToken,
    maxConcurrentChecks,
    maxConcurrentChecksPerAccount: perAccount === null ? Math.ceil(maxConcurrentChecks / 2) : int(perAccount, "max-concurrent-checks-per-account", 1, 100_000),
    retentionDays: int(raw("retentionDays"), "retention-days", 1, 3650),
    peerResultLimit: int(raw("peerResultLimit"), "peer-result-limit", 0, 10_000_000),
    traceBudgetBytes: int(raw("traceBudgetMib"), "trace-budget-mib", 0, 1_000_000) * 1024 * 1024,
    blockPrivateTargets: bool(raw("blockPrivateTargets"), "block-private-targets"),
    metricsPublic: bool(raw("metricsPublic"), "metrics-public"),
    // Bun takes 0-255 s; 0 (never) is not offered: it would give slow clients connections for free
    idleTimeoutSec: int(raw("idleTimeout"), "idle-timeout", 1, 255),
    patternTimeLimitMs: int(raw("patternTimeLimitMs"), "pattern-time-limit-ms", 100, 60_000),
    secretKey: env.VIGIL_SECRET_KEY || null,
  });
}

function parseFlags(argv: string[]): Record<string, string | undefined> {
  const options: Record<string, { type: "string" | "boolean" }> = {};
  for (const spec of Object.values(SERVE_OPTIONS) as OptionSpec[]) options[spec.flag] = { type: spec.kind === "bool" ? "boolean" : "string" };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false }) as { values: Record<string, string | boolean | undefined> });
  } catch (e) {
    throw new ConfigError((e as Error).message.replace(/\. To specify.*$/s, ""));
  }
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(values)) out[k] = typeof v === "boolean" ? String(v) : v;
  return out;
}

function int(text: string | null, name: string, min: number, max: number): number {
  const n = Number(text);
  if (text === null || !/^-?\d+$/.test(text.trim()) || n < min || n > max) throw new ConfigError(`--${name} must be an integer from ${min} to ${max}, got "${text}"`);
  return n;
}

function bool(text: string | null, name: string): boolean {
  const t = (text ?? "").toLowerCase();
  if (["true", "1", "yes", "on"].includes(t)) return true;
  if (["false", "0", "no", "off", ""].includes(t)) return false;
  throw new ConfigError(`--${name} must be true or false, got "${text}"`);
}

function url(text: string, name: string): string {
  try {
    const u = new URL(text);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return text;
  } catch {
    throw new ConfigError(`--${name} must be an http(s) URL, got "${text}"`);
  }
}

function optionalUrl(text: string | null, name: string): string | null {
  return text === null || text === "" ? null : url(text, name);
}

/** "ip", "ip:port" or "[ipv6]:port": a DNS server to ask, never a name (resolving it would need one). */
function resolverAddress(text: string | null): string | null {
  if (text === null || text === "") return null;
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(text) ?? [text, text];
  if (isIP(m[1]!) === 0 || (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535))) throw new ConfigError(`--domain-resolver takes an IP address with an optional port (10.0.0.53, 10.0.0.53:5353, [2001:db8::53]:53), got "${text}"`);
  return text;
}

function list(text: string | null): string[] {
  return (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);
}

/** Addresses or CIDR ranges; a typo would silently trust nobody (or somebody else), so it stops the start. */
function proxies(entries: string[]): string[] {
  for (const e of entries) if (!isProxyEntry(e)) throw new ConfigError(`--trusted-proxy takes IP addresses or CIDR ranges (10.0.0.0/8), got "${e}"`);
  return entries;
}

const stripSlash = (s: string) => s.replace(/\/+$/, "");

/** `pro=120,enterprise=300`; free accounts never reach the limiter (they get 403 first). */
export function parseRateLimits(text: string): Record<Plan, number> {
  const limits: Record<Plan, number> = { free: 0, pro: 120, enterprise: 300 };
  for (const part of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^(pro|enterprise)=(\d+)$/.exec(part);
    if (!m || Number(m[2]) < 1) throw new ConfigError(`--rate-limit takes pro=N,enterprise=N with N at least 1, got "${part}"`);
    limits[m[1] as Plan] = Number(m[2]);
  }
  return limits;
}

/** A postgres:// or postgresql:// URL naming a database, or null for SQLite. */
export function databaseUrl(v: string | null): string | null {
  if (v === null || v === "") return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError("--database-url must be a URL like postgres://user:password@host:5432/database");
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") throw new ConfigError(`--database-url must be a postgres:// URL, got ${u.protocol}//…`);
  if (!u.hostname && !u.searchParams.get("host")) throw new ConfigError("--database-url names no host");
  return v;
}

function smtpUrl(v: string | null): string | null {
  if (v === null || v === "") return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`--smtp-url must be smtp://host:port or smtps://host:port, got ${JSON.stringify(v)}`);
  }
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new ConfigError(`--smtp-url must start with smtp:// or smtps://, got ${u.protocol}`);
  return v;
}
