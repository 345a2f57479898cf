import type { ChannelType } from "../../domain/notification-channel-schema.ts";
import type { ChannelSender } from "../types.ts";
import { appriseSender } from "./apprise.ts";
import { discordSender } from "./discord.ts";
import { emailSender } from "./email.ts";
import { googleChatSender } from "./google-chat.ts";
import { gotifySender } from "./gotify.ts";
import { homeassistantSender } from "./homeassistant.ts";
import { matrixSender } from "./matrix.ts";
import { mattermostSender } from "./mattermost.ts";
import { ntfySender } from "./ntfy.ts";
import { opsgenieSender } from "./opsgenie.ts";
import { pagerdutySender } from "./pagerduty.ts";
import { pushoverSender } from "./pushover.ts";
import { rocketchatSender } from "./rocketchat.ts";
import { signalSender } from "./signal.ts";
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
  matrix: matrixSender,
  mattermost: mattermostSender,
  rocketchat: rocketchatSender,
  google_chat: googleChatSender,
  pagerduty: pagerdutySender,
  opsgenie: opsgenieSender,
  homeassistant: homeassistantSender,
  signal: signalSender,
  apprise: appriseSender,
};
