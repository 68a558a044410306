import type { BlockAction, ButtonAction } from "@slack/bolt"
import type { InboundMessage } from "../../src/core/types.ts"
import { conversationOf } from "./conversation.ts"
import { attachmentsOf, type SlackFile } from "./files.ts"

/** The fields of a `message` or `app_mention` event that decide what it is; all optional, as Slack's variants differ. */
export type MessageEvent = {
  type: string
  subtype?: string
  user?: string
  bot_id?: string
  text?: string
  ts: string
  thread_ts?: string
  channel: string
  channel_type?: string
  team?: string
  files?: SlackFile[]
}

/** Buttons Steward posts have action ids `steward:<n>`, unique within their message. */
export const ACTION_ID = /^steward:\d+$/
export const actionIdOf = (index: number) => `steward:${index}`

/** Message subtypes that are still a person writing to Steward; the rest (edits, joins, deletions, bots) are not. */
const USER_SUBTYPES = new Set(["file_share", "thread_broadcast"])

export type EventContext = {
  team: string
  eventId: string
  botUserId: string
  /** Files are downloaded with it, from these origins only (`tokenOrigins`). */
  botToken: string
  fileOrigins: ReadonlySet<string>
  /** A thread in a channel that Steward takes part in: its messages need no mention. */
  follows(conversation: string): boolean
}

/**
 * A DM → `slack:<team>:<channel>`; a mention in a channel, or a message in a thread Steward
 * follows (or in a DM's thread) → `slack:<team>:<channel>:<thread_ts>`. Anything else — bots,
 * Steward itself, edits and other subtypes, channel chatter — is not for Steward: undefined.
 */
export function inboundOfEvent(event: MessageEvent, context: EventContext): InboundMessage | undefined {
  if (event.bot_id || event.subtype === "bot_message" || !event.user || event.user === context.botUserId) return undefined
  if (event.subtype && !USER_SUBTYPES.has(event.subtype)) return undefined
  const text = plainText(event.text ?? "", context.botUserId)
  const attachments = attachmentsOf(event.files, context.botToken, context.fileOrigins)
  if (!text && attachments.length === 0) return undefined
  const team = event.team ?? context.team
  const at = (thread?: string) => conversationOf({ team, channel: event.channel, thread })
  let conversation: string
  if (event.type === "app_mention") conversation = at(event.thread_ts ?? event.ts)
  else if (event.channel_type === "im") conversation = at(event.thread_ts)
  // In a channel a mention also arrives as app_mention, which is the one taken.
  else if (event.thread_ts && context.follows(at(event.thread_ts)) && !mentions(event.text ?? "", context.botUserId)) conversation = at(event.thread_ts)
  else return undefined
  return { conversation, user: `slack:${event.user}`, text, eventId: `slack:${context.eventId}`, ...(attachments.length > 0 && { attachments }) }
}

/** A press of one of Steward's buttons, in the conversation of the message that carries it. */
export function inboundOfAction(body: BlockAction<ButtonAction>): InboundMessage | undefined {
  const action = body.actions[0]
  const channel = (body.container.channel_id as string | undefined) ?? body.channel?.id
  const team = body.team?.id ?? body.user.team_id
  if (!action || !ACTION_ID.test(action.action_id) || action.value === undefined || !channel || !team) return undefined
  // A top-level message that has replies carries thread_ts equal to its own ts: it is not in a thread.
  const threadTs = body.message?.thread_ts as string | undefined
  const thread = threadTs && threadTs !== body.message?.ts ? threadTs : undefined
  return {
    conversation: conversationOf({ team, channel, thread }),
    user: `slack:${body.user.id}`,
    text: action.text.text,
    eventId: `slack:action:${body.trigger_id || action.action_ts}`,
    action: action.value,
  }
}

const mentions = (text: string, botUserId: string) => text.includes(`<@${botUserId}>`) || text.includes(`<@${botUserId}|`)

/**
 * What the user wrote, as they see it: the mention of Steward dropped, Slack's `<…>` links and
 * mentions as readable text, its three escaped characters unescaped.
 */
export function plainText(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, "g"), "")
    .replace(/<([^<>|]+)(?:\|([^<>]*))?>/g, (_, target: string, label?: string) => {
      if (target.startsWith("@") || target.startsWith("#")) return label ? `${target[0]}${label.replace(/^[@#]/, "")}` : target
      if (target.startsWith("!")) return label ?? `@${target.slice(1).split("^")[0]}`
      const url = target.replace(/^mailto:/, "")
      return label && label !== url ? `${label} (${target})` : url
    })
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .trim()
}
