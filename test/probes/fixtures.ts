/** A complete ProbeMonitor with neutral defaults, and a ProbeContext, for probe tests. */
import type { ProbeMonitor } from "../../src/domain/monitor.ts";
import type { ProbeContext } from "../../src/probes/types.ts";

export function monitor(overrides: Partial<ProbeMonitor>): ProbeMonitor {
  return {
    id: 1,
    monitor_type: "http",
    target: null,
    method: "GET",
    timeout_ms: 3000,
    interval_sec: 60,
    port: null,
    expected_http_codes: null,
    keyword: null,
    api_expected_content_type: null,
    api_expected_body_contains: null,
    api_max_latency_ms: null,
    api_json_assertions_json: null,
    api_headers_json: null,
    api_body: null,
    api_auth_type: "none",
    api_auth_basic_user: null,
    api_auth_api_key_header: null,
    api_auth_bearer_token: null,
    api_auth_basic_pass: null,
    api_auth_api_key_value: null,
    synthetic_enabled: false,
    synthetic_steps_json: null,
    synthetic_trace_body_detail: "none",
    tls_verify: true,
    follow_redirects: true,
    ssl_expiry_warn_days: null,
    dns_record_type: "A",
    dns_resolver: null,
    dns_expected_answer: null,
    ws_send: null,
    ws_expect: null,
    grpc_service: "",
    grpc_tls: false,
    smtp_security: "none",
    db_password: null,
    db_query: null,
    db_tls: false,
    redis_username: null,
    docker_host: null,
    domain_expiry_warn_days: 30,
    block_private_targets: false,
    ...overrides,
  };
}

export function context(overrides: Partial<ProbeContext> = {}): ProbeContext {
  return { signal: new AbortController().signal, now: () => Date.now(), ...overrides };
}
