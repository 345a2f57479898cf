/**
 * A notification channel's URL as responses show it (README, Security): incoming-webhook services
 * (Slack, Discord, Teams, Mattermost …) put the credential in the path or query, so only the
 * scheme and host are readable; the rest is write-only, shown as `***`.
 */
export const URL_MASK = "***";

export function maskedUrl(url: string): string {
  try {
    const u = new URL(url);
    const hidden = (u.pathname !== "/" && u.pathname !== "") || u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "";
    return `${u.protocol}//${u.host}/${hidden ? URL_MASK : ""}`;
  } catch {
    return URL_MASK;
  }
}

/** True when `sent` is the masked form of `stored`: a client wrote back what it read, meaning "keep it". */
export function isMaskOf(sent: unknown, stored: unknown): boolean {
  return typeof sent === "string" && typeof stored === "string" && sent.includes(URL_MASK) && sent === maskedUrl(stored);
}
