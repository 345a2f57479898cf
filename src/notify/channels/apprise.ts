import { appriseUrlList } from "../../domain/notification-channel-validation.ts";
import { alertKind, alertPlainText, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { delivered, misconfigured, type AlertPayload, type ChannelSender, type DeliveryOutcome, type SendContext } from "../types.ts";

/** Apprise's notification types: the icon and colour each service shows. */
export function appriseType(p: AlertPayload): "info" | "success" | "warning" | "failure" {
  switch (alertKind(p)) {
    case "down":
      return "failure";
    case "up":
      return "success";
    case "degraded":
    case "flapping":
      return "warning";
    default:
      return "info";
  }
}

/** Characters of the command's complaints quoted in an error. */
const QUOTED_CHARS = 300;
const ANY_URL = /[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/**
 * Every piece of the channel's URLs long enough to be a credential (tokens often sit where a host
 * would, as in tgram://bottoken/chatid), replaced where it stands as a word of its own; whole URLs
 * first. What is left says what failed without saying where to.
 */
export function redactUrls(text: string, urls: readonly string[]): string {
  let out = text;
  for (const u of [...urls].sort((a, b) => b.length - a.length)) out = out.split(u).join("[an Apprise URL]");
  out = out.replace(ANY_URL, "[an Apprise URL]");
  const pieces = new Set(urls.flatMap((u) => u.replace(/^[^:]*:\/\//, "").split(/[/:@?&=#,;+\s]+/).map((p) => decodeURIComponentSafe(p)).filter((p) => p.length >= 4)));
  for (const p of [...pieces].sort((a, b) => b.length - a.length)) {
    out = out.replace(new RegExp(`(?<![A-Za-z0-9])${p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9])`, "g"), "[redacted]");
  }
  return out;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The arguments of one run; the URLs travel in APPRISE_URLS, never in the arguments other local users can read (ps). */
export function appriseArguments(command: string, p: AlertPayload): string[] {
  return [command, "-vv", "-n", appriseType(p), "-t", alertTitle(p), "-b", alertPlainText(p, { title: false })];
}

/**
 * How a run of the command went. Exit 0 is delivered. A URL the command cannot read, or failures
 * that are all refusals (4xx other than 408 and 429), are permanent; connection errors, 5xx and
 * anything else temporary, as for the HTTP channels. The error quotes the command's warnings with
 * every URL and credential taken out.
 */
export function appriseOutcome(exitCode: number, output: string, urls: readonly string[]): DeliveryOutcome {
  if (exitCode === 0) return delivered(null);
  const complaints = [...new Set(output.split("\n").flatMap((l) => /\s-\s(?:WARNING|ERROR|CRITICAL)\s-\s(.*)$/.exec(l)?.[1]?.trim() ?? []))];
  const said = complaints.map((c) => redactUrls(c, urls)).join("; ").slice(0, QUOTED_CHARS);
  const error = `apprise exited with status ${exitCode}${said ? `: ${said}` : ""}`;
  const unreadable = complaints.some((c) => /Unparseable URL|Unsupported|You must specify at least one server URL/i.test(c));
  const statuses = complaints.flatMap((c) => [...c.matchAll(/error=(\d{3})/g)].map((m) => Number(m[1])));
  const refusals = statuses.length > 0 && complaints.length === statuses.length && statuses.every((s) => s >= 400 && s < 500 && s !== 408 && s !== 429);
  return { ok: false, statusCode: null, error, permanent: exitCode === 2 || exitCode === 3 || unreadable || refusals };
}

/** Runs `apprise` once as a child process (no shell), killed when the send's time is up or Vigil stops. */
async function runCommand(command: string, alert: AlertPayload, urls: string[], signal: AbortSignal, sc: SendContext): Promise<DeliveryOutcome> {
  const child = Bun.spawn(appriseArguments(command, alert), {
    // only what the command needs: Vigil's own environment (database URL, peer token) stays out of it
    env: { APPRISE_URLS: urls.join("\n"), PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const kill = () => child.kill("SIGKILL");
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, sc.timeoutMs);
  signal.addEventListener("abort", kill, { once: true });
  try {
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    if (timedOut) return { ok: false, statusCode: null, error: `apprise did not finish within ${sc.timeoutMs} ms`, permanent: false };
    if (signal.aborted) return { ok: false, statusCode: null, error: "interrupted by shutdown", permanent: false };
    return appriseOutcome(code, `${out}\n${err}`, urls);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", kill);
  }
}

/**
 * Apprise, one channel type for the services Apprise reaches: with a `url`, a POST of
 * `{urls, title, body, type}` to that Apprise API server's `/notify`; without one, the `apprise`
 * command on the Vigil host. The command's own connections cannot be held to the account's
 * private-target rule, so an account that blocks private targets must use an API server.
 * `findCommand` is the command's path, or null when it is not installed.
 */
export function appriseSenderWith(findCommand: () => string | null): ChannelSender {
  return {
    async send(alert, channel, signal, sc) {
      const text = channel.settings.apprise_urls as string | undefined;
      const urls = text ? appriseUrlList(text) : [];
      if (urls.length === 0) return misconfigured("the channel needs apprise_urls");
      const server = channel.settings.url as string | null | undefined;
      if (server) {
        const body = JSON.stringify({ urls: urls.join(", "), title: alertTitle(alert), body: alertPlainText(alert, { title: false }), type: appriseType(alert) });
        const out = await postHttp(`${server.replace(/\/+$/, "")}/notify`, { headers: { "content-type": "application/json" }, body }, signal, sc);
        // 424: the server took the request but a service behind it failed, which may pass
        const permanent = out.statusCode === 424 ? false : out.permanent;
        return { ...out, permanent, error: out.error === null ? null : redactUrls(out.error, urls) };
      }
      if (sc.blockPrivateTargets) {
        return misconfigured("private targets are blocked for this account, and the connections of the apprise command cannot be checked against that rule; set url to an Apprise API server");
      }
      const command = findCommand();
      if (!command) return misconfigured("the apprise command is not installed on the Vigil host (apt install apprise, or pip install apprise); or set url to an Apprise API server");
      return runCommand(command, alert, urls, signal, sc);
    },
  };
}

export const appriseSender = appriseSenderWith(() => Bun.which("apprise"));
