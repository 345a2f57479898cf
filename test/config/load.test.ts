import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/config.ts";
import { loadConfig } from "../../src/config/load.ts";

describe("loadConfig", () => {
  test("defaults are the README's Configuration table", () => {
    const c = loadConfig([], {});
    expect(c).toMatchObject({
      dataDir: "./data", host: "0.0.0.0", port: 8080, baseUrl: "http://localhost:8080", heartbeatUrl: "http://localhost:8080",
      region: "local", confirmations: 2, extraCaFile: null, rateLimits: { free: 0, pro: 120, enterprise: 300 },
      pingLimitToken: 60, pingLimitIp: 600, webWriteLimit: 120, guessLimit: 10, role: "leader", logLevel: "info", smtpUrl: null, statusMailPeriodMs: 300_000,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });
  test("env applies; flags win over env; base url follows the port", () => {
    const c = loadConfig(["--port", "9000", "--region", "eu"], { VIGIL_PORT: "7000", VIGIL_REGION: "us", VIGIL_DATA: "/x", VIGIL_CONFIRMATIONS: "3" });
    expect(c.port).toBe(9000);
    expect(c.region).toBe("eu");
    expect(c.dataDir).toBe("/x");
    expect(c.confirmations).toBe(3);
    expect(c.baseUrl).toBe("http://localhost:9000");
  });
  test("heartbeat url defaults to the base url; trailing slashes dropped", () => {
    const c = loadConfig(["--base-url", "https://vigil.example.com/"], {});
    expect(c.heartbeatUrl).toBe("https://vigil.example.com");
  });
  test("whether the base and heartbeat URLs were given: without them the dashboard's links follow the browser", () => {
    expect(loadConfig([], {})).toMatchObject({ baseUrlFixed: false, heartbeatUrlFixed: false });
    expect(loadConfig([], { VIGIL_BASE_URL: "https://v.example" })).toMatchObject({ baseUrlFixed: true, heartbeatUrlFixed: true });
    expect(loadConfig(["--heartbeat-url", "https://ping.example"], {})).toMatchObject({ baseUrlFixed: false, heartbeatUrlFixed: true });
  });
  test("--trusted-proxy takes addresses and CIDR ranges, and refuses anything else", () => {
    expect(loadConfig(["--trusted-proxy", "10.0.0.0/8, 192.168.1.1,fd00::/8,::1"], {}).trustedProxies).toEqual(["10.0.0.0/8", "192.168.1.1", "fd00::/8", "::1"]);
    for (const bad of ["10.0.0.0/33", "proxy.lan", "10.0.0.1/"]) expect(() => loadConfig(["--trusted-proxy", bad], {})).toThrow(ConfigError);
  });
  test("--max-concurrent-checks-per-account: half the slots by default, rounded up; an explicit number wins", () => {
    expect(loadConfig([], {}).maxConcurrentChecksPerAccount).toBe(250);
    expect(loadConfig(["--max-concurrent-checks", "7"], {}).maxConcurrentChecksPerAccount).toBe(4);
    expect(loadConfig(["--max-concurrent-checks-per-account", "500"], {}).maxConcurrentChecksPerAccount).toBe(500);
    expect(loadConfig([], { VIGIL_MAX_CONCURRENT_CHECKS_PER_ACCOUNT: "30" }).maxConcurrentChecksPerAccount).toBe(30);
    expect(() => loadConfig(["--max-concurrent-checks-per-account", "0"], {})).toThrow("--max-concurrent-checks-per-account must be an integer from 1 to 100000");
  });
  test("--rate-limit and VIGIL_RATE_LIMIT", () => {
    expect(loadConfig(["--rate-limit", "pro=10"], {}).rateLimits).toEqual({ free: 0, pro: 10, enterprise: 300 });
    expect(loadConfig([], { VIGIL_RATE_LIMIT: "enterprise=5" }).rateLimits.enterprise).toBe(5);
  });
  test("--rdap-bootstrap and VIGIL_RDAP_BOOTSTRAP; none: IANA's file (null here, the domain probe's default)", () => {
    expect(loadConfig([], {}).rdapBootstrapUrl).toBeNull();
    expect(loadConfig([], { VIGIL_RDAP_BOOTSTRAP: "http://rdap.internal/dns.json" }).rdapBootstrapUrl).toBe("http://rdap.internal/dns.json");
    expect(loadConfig(["--rdap-bootstrap", "https://rdap.example/boot.json"], { VIGIL_RDAP_BOOTSTRAP: "http://rdap.internal/dns.json" }).rdapBootstrapUrl).toBe("https://rdap.example/boot.json");
  });
  test("--domain-resolver and VIGIL_DOMAIN_RESOLVER: an address with an optional port; none: the system's resolvers", () => {
    expect(loadConfig([], {}).domainResolver).toBeNull();
    for (const r of ["10.0.0.53", "10.0.0.53:5353", "[2001:db8::53]:53", "2001:db8::53"]) expect(loadConfig(["--domain-resolver", r], {}).domainResolver).toBe(r);
    expect(loadConfig([], { VIGIL_DOMAIN_RESOLVER: "127.0.0.1:53" }).domainResolver).toBe("127.0.0.1:53");
  });
  test.each([
    [["--domain-resolver", "dns.example"]], [["--domain-resolver", "10.0.0.53:99999"]], [["--domain-resolver", "10.0.0.53:"]],
    [["--rdap-bootstrap", "ftp://x/dns.json"]], [["--rdap-bootstrap", "dns.json"]],
    [["--port", "x"]], [["--confirmations", "0"]], [["--base-url", "ftp://x"]], [["--rate-limit", "gold=5"]], [["--rate-limit", "pro=0"]],
    [["--unknown-flag"]], [["--block-private-targets", "--port", "1", "extra"]], [["--region", "has space"]],
  ])("%p is refused", (argv) => {
    expect(() => loadConfig(argv as string[], {})).toThrow(ConfigError);
  });
});
