import { rootCertificates } from "node:tls";
import { isIP } from "node:net";
import nodemailer from "nodemailer";
import { isPrivateAddress } from "../../domain/ip-ranges.ts";
import { parseAddressList } from "../../domain/notification-channel-validation.ts";
import { startDeadline } from "../../net/deadline.ts";
import { PRIVATE_REPLY } from "../http-post.ts";
import { toProbeFailure } from "../../net/net-errors.ts";
import { resolveHost, type ResolvedHost } from "../../net/resolve-host.ts";
import type { SmtpSecurity } from "../../domain/monitor.ts";
import { SMTP_DEFAULT_PORT } from "../../domain/notification-channel-schema.ts";
import { alertFields, alertPlainText, alertSummary, alertTitle, colourHex, escapeHtml } from "../format.ts";
import { misconfigured, type AlertPayload, type ChannelSender, type DeliveryOutcome } from "../types.ts";

export function emailSubject(p: AlertPayload): string {
  return alertTitle(p);
}

/** A small HTML body that survives mail clients: inline styles, one table, no images. */
export function emailHtml(p: AlertPayload): string {
  const rows = alertFields(p)
    .map((f) => `<tr><th align="left" style="padding:4px 12px 4px 0;vertical-align:top">${escapeHtml(f.label)}</th><td style="padding:4px 0">${escapeHtml(f.value)}</td></tr>`)
    .join("");
  return [
    `<div style="font-family:sans-serif;font-size:14px">`,
    `<h2 style="color:${colourHex(p)};margin:0 0 8px">${escapeHtml(alertTitle(p))}</h2>`,
    `<p>${escapeHtml(alertSummary(p))}</p>`,
    `<table cellspacing="0" cellpadding="0">${rows}</table>`,
    `<p><a href="${escapeHtml(p.dashboard_url)}">Open in Vigil</a></p>`,
    `</div>`,
  ].join("\n");
}

/**
 * SMTP reply codes: 5xx is a permanent refusal, 4xx a temporary one; authentication failures repeat.
 * The server's own words are quoted only when it is on a public address (`quote`), as for webhooks.
 */
function classify(err: unknown, quote: boolean): DeliveryOutcome {
  const e = err as { responseCode?: number; code?: string; message?: string };
  const code = typeof e.responseCode === "number" ? e.responseCode : null;
  const text = quote ? `: ${(e.message ?? String(err)).replace(/\s+/g, " ").slice(0, 300)}` : ` ${PRIVATE_REPLY.replace("receiver", "server")}`;
  const message = `SMTP ${e.code ?? "error"}${code ? ` ${code}` : ""}${text}`;
  const permanent = e.code === "EAUTH" || e.code === "EENVELOPE" || (code !== null && code >= 500);
  return { ok: false, statusCode: code, error: message, permanent };
}

/**
 * Email over SMTP with nodemailer: `none` sends in the clear (ignoreTLS), `starttls` insists on
 * STARTTLS (requireTLS), `tls` connects over TLS (port 465 style). Authenticates when smtp_user is
 * set. Plain-text and HTML bodies.
 */
export const emailSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const s = channel.settings;
    const to = typeof s.email_to === "string" ? parseAddressList(s.email_to) : null;
    if (!to || typeof s.smtp_host !== "string" || typeof s.smtp_from !== "string") return misconfigured("the channel needs email_to, smtp_host and smtp_from");
    const security = ((s.smtp_security as SmtpSecurity | undefined) ?? "starttls") as SmtpSecurity;
    const host = s.smtp_host;
    // resolved and judged here, then connected to by address, like every other outgoing connection
    const deadline = startDeadline(sc.timeoutMs, signal);
    let server: ResolvedHost;
    try {
      server = await resolveHost(host, deadline, sc.blockPrivateTargets === true);
    } catch (err) {
      const f = toProbeFailure(err, host);
      return { ok: false, statusCode: null, error: f.message, permanent: f.code === "target_blocked" };
    } finally {
      deadline.dispose();
    }
    const transport = nodemailer.createTransport({
      host: server.ip,
      port: (s.smtp_port as number | null | undefined) ?? SMTP_DEFAULT_PORT[security],
      secure: security === "tls",
      requireTLS: security === "starttls",
      ignoreTLS: security === "none",
      auth: typeof s.smtp_user === "string" ? { user: s.smtp_user, pass: (s.smtp_pass as string | undefined) ?? "" } : undefined,
      tls: { ...(sc.extraCa ? { ca: [...rootCertificates, sc.extraCa] } : {}), ...(isIP(host) ? {} : { servername: host }) },
      connectionTimeout: sc.timeoutMs,
      greetingTimeout: sc.timeoutMs,
      socketTimeout: sc.timeoutMs,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    const onAbort = () => transport.close();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const info = await transport.sendMail({
        from: s.smtp_from,
        to,
        subject: emailSubject(alert),
        text: alertPlainText(alert),
        html: emailHtml(alert),
        headers: { "X-Vigil-Event": alert.event, "X-Vigil-Delivery": sc.deliveryId },
      });
      const code = Number(/^(\d{3})/.exec(String(info.response ?? ""))?.[1] ?? 250);
      return { ok: true, statusCode: code, error: null, permanent: false };
    } catch (err) {
      if (signal.aborted) return { ok: false, statusCode: null, error: "interrupted by shutdown", permanent: false };
      return classify(err, !isPrivateAddress(server.ip));
    } finally {
      signal.removeEventListener("abort", onAbort);
      transport.close();
    }
  },
};
