import { alertFields, alertPlainText, alertSummary, alertTitle, escapeHtml } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** An m.room.message event: plain text in `body`, the same in Matrix's HTML subset in `formatted_body`. */
export function matrixMessage(p: AlertPayload): Record<string, unknown> {
  const items = alertFields(p).map((f) => `<li><strong>${escapeHtml(f.label)}:</strong> ${escapeHtml(f.value)}</li>`).join("");
  return {
    msgtype: "m.text",
    body: alertPlainText(p),
    format: "org.matrix.custom.html",
    formatted_body: `<p><strong>${escapeHtml(alertTitle(p))}</strong><br>${escapeHtml(alertSummary(p))}</p><ul>${items}</ul><p><a href="${escapeHtml(p.dashboard_url)}">Open in Vigil</a></p>`,
  };
}

/**
 * Matrix client-server API: `PUT /_matrix/client/v3/rooms/{room}/send/m.room.message/{txn}` on the
 * homeserver in `url`, as the account whose access token the channel holds. The transaction id is
 * the delivery id: new for every message, and the same on a retry, so a homeserver that already
 * has the message drops the repeat.
 */
export const matrixSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    const room = channel.settings.matrix_room_id as string | undefined;
    const token = channel.settings.matrix_access_token as string | undefined;
    if (!url || !room || !token) return misconfigured("the channel needs url, matrix_room_id and matrix_access_token");
    const target = `${url.replace(/\/+$/, "")}/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/m.room.message/${encodeURIComponent(`vigil-${sc.deliveryId}`)}`;
    return postHttp(target, { method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(matrixMessage(alert)) }, signal, sc);
  },
};
