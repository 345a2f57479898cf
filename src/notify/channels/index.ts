import type { ChannelType } from "../../domain/notification-channel-schema.ts";
import type { ChannelSender } from "../types.ts";
import { discordSender } from "./discord.ts";
import { emailSender } from "./email.ts";
import { gotifySender } from "./gotify.ts";
import { ntfySender } from "./ntfy.ts";
import { pushoverSender } from "./pushover.ts";
import { slackSender } from "./slack.ts";
import { teamsSender } from "./teams.ts";
import { telegramSender } from "./telegram.ts";
import { webhookSender } from "./webhook.ts";

/** channel_type → sender: adding a channel is a file and a line here, never another branch elsewhere. */
export const CHANNEL_SENDERS: Readonly<Record<ChannelType, ChannelSender>> = {
  webhook: webhookSender,
  slack: slackSender,
  discord: discordSender,
  teams: teamsSender,
  telegram: telegramSender,
  ntfy: ntfySender,
  gotify: gotifySender,
  pushover: pushoverSender,
  email: emailSender,
};
