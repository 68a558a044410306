import { randomBytes } from "node:crypto"
import { nextTs, type SlackFile, type SlackMessage } from "./slack-messages.ts"

/** Events and button presses as Slack sends them to an app: what a test delivers to Steward. */

let lastEvent = 0

export type SlackEvent = { type: string; user?: string; text?: string; ts: string; channel: string; channel_type?: string; thread_ts?: string; subtype?: string; bot_id?: string; event_ts?: string; files?: SlackFile[] }
export type EventCallback = { token: string; team_id: string; api_app_id: string; event: SlackEvent; type: "event_callback"; event_id: string; event_time: number; authorizations: object[] }

export function eventCallback(team: string, event: SlackEvent, eventId = `Ev${String(++lastEvent).padStart(8, "0")}`): EventCallback {
  return {
    token: "legacy-verification-token",
    team_id: team,
    api_app_id: "A0APP",
    event: { event_ts: event.ts, ...event },
    type: "event_callback",
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: team, user_id: "U0BOT", is_bot: true, is_enterprise_install: false }],
  }
}

/** A user's direct message to the bot (in a thread of the DM when `thread_ts` is given). */
export function dmEvent(user: string, channel: string, text: string, extra: Partial<SlackEvent> = {}): SlackEvent {
  return { type: "message", user, text, ts: nextTs(), channel, channel_type: "im", ...extra }
}

/** Files shared in a DM, with `text` as the message (Slack's file_share subtype). */
export function fileShareEvent(user: string, channel: string, text: string, files: SlackFile[]): SlackEvent {
  return dmEvent(user, channel, text, { subtype: "file_share", files })
}

/** `@steward …` in a channel: Slack sends the mention with the bot's user id in angle brackets. */
export function mentionEvent(user: string, channel: string, text: string, extra: Partial<SlackEvent> = {}): SlackEvent {
  return { type: "app_mention", user, text: `<@U0BOT> ${text}`, ts: nextTs(), channel, ...extra }
}

export function channelMessageEvent(user: string, channel: string, text: string, extra: Partial<SlackEvent> = {}): SlackEvent {
  return { type: "message", user, text, ts: nextTs(), channel, channel_type: "channel", ...extra }
}

export type BlockActionsPayload = ReturnType<typeof blockActions>

/** A press of the button `label` on `message`, as the interactivity payload Slack posts. */
export function blockActions(team: string, user: string, message: SlackMessage, label: string) {
  const element = message.blocks?.flatMap((block) => (block.type === "actions" ? (block.elements ?? []) : [])).find((e) => e.text?.text === label)
  if (!element) throw new Error(`no button "${label}" on message ${message.ts}`)
  const actionTs = nextTs()
  return {
    type: "block_actions" as const,
    team: { id: team, domain: "steward-test" },
    user: { id: user, username: user.toLowerCase(), team_id: team },
    api_app_id: "A0APP",
    token: "legacy-verification-token",
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false, ...(message.thread_ts && { thread_ts: message.thread_ts }) },
    trigger_id: `${Date.now()}.${randomBytes(4).readUInt32BE()}.${randomBytes(8).toString("hex")}`,
    channel: { id: message.channel, name: "directmessage" },
    message: { type: "message", user: message.user, bot_id: message.bot_id, ts: message.ts, text: message.text, blocks: message.blocks, ...(message.thread_ts && { thread_ts: message.thread_ts }) },
    response_url: "http://127.0.0.1:9/response-url-not-used",
    actions: [{ type: "button", action_id: element.action_id!, block_id: "steward", text: element.text!, value: element.value!, action_ts: actionTs }],
  }
}
