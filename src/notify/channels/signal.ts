import { alertPlainText } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

export function signalBody(p: AlertPayload, number: string, recipients: string[]): Record<string, unknown> {
  return { message: alertPlainText(p), number, recipients };
}

/** signal-cli REST API (bbernhard/signal-cli-rest-api): `POST {url}/v2/send` from the registered number to the recipients. */
export const signalSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    const number = channel.settings.signal_number as string | undefined;
    const recipients = channel.settings.signal_recipients as string[] | undefined;
    if (!url || !number || !recipients?.length) return misconfigured("the channel needs url, signal_number and signal_recipients");
    return postHttp(`${url.replace(/\/+$/, "")}/v2/send`, { headers: { "content-type": "application/json" }, body: JSON.stringify(signalBody(alert, number, recipients)) }, signal, sc);
  },
};
