import type { ToolSummary } from "../store/records.ts"

/** A chat message or a button press, as an adapter hands it to the core. */
export interface InboundMessage {
  /** `<channel>:…`, e.g. `telegram:1001`, `slack:T1:D1:1700000000.000100`. */
  conversation: string
  /** `<channel>:<user-id>`. */
  user: string
  /** What the user typed; for a button press, the button's label. */
  text: string
  /** The platform's id of this update or event (`telegram:<update_id>`, `slack:<event_id>`).
   *  The core remembers it durably: the same id delivered again is ignored. */
  eventId?: string
  /** A button press: the `id` of the pressed button as the core gave it in `OutgoingMessage`. */
  action?: string
}

/** A button under a message. `id` is short (≤ 64 bytes) and resolved by the core. */
export interface Button {
  id: string
  label: string
}

/** What the core asks a channel to post: Markdown text, optionally with buttons. */
export interface OutgoingMessage {
  text: string
  buttons?: Button[]
}

/** What a running task is doing, for a status line the adapter may edit in place. */
export interface ProgressUpdate {
  taskId: string
  agent: string
  state: "running" | "done"
  tools: ToolSummary[]
}

/** A command a user may type (`/tasks`), for platforms that list them (Telegram's menu). */
export interface CommandInfo {
  name: string
  description: string
  /** Only owners may run it, so a platform's menu shows it to them alone. */
  ownerOnly?: boolean
}

/**
 * A little durable memory the core keeps for a channel, for what an adapter shows that must be
 * cleaned up even after a crash (the status messages of tasks that were running).
 */
export interface ChannelState {
  set(key: string, value: unknown): Promise<void>
  delete(key: string): Promise<void>
  /** The entries whose key starts with `prefix`, in key order. */
  list<T>(prefix: string): Promise<Array<{ key: string; value: T }>>
}

export interface ChannelHandlers {
  /** Resolves once the core has durably taken the message (or decided to ignore it). */
  onMessage(message: InboundMessage): Promise<void>
  commands: CommandInfo[]
  /** This channel's conversations Steward already takes part in, so that after a restart an
   *  adapter still recognises them (a Slack thread it follows needs no new mention). */
  conversations?: string[]
  /** This channel's owners (`<channel>:<user-id>` from ALLOWED_USERS): they see owner-only commands. */
  owners?: string[]
  state?: ChannelState
}

/** Whether a channel can take and send messages now, for /healthz and /metrics. */
export interface ChannelHealth {
  ok: boolean
  /** Why not, in words for the operator ("could not reach https://api.telegram.org …"). */
  reason?: string
  /** Times the connection to the platform was lost and came back. */
  reconnects: number
}

/**
 * The contract between the core and a chat platform. Adapters know nothing about agents:
 * they turn platform events into InboundMessages and render what the core sends.
 */
export interface Channel {
  /** The prefix of the conversation ids this channel owns ("console", "slack", "telegram"). */
  readonly name: string
  start(handlers: ChannelHandlers): Promise<void>
  /** Posts one message; resolves with the platform's id for it once the platform accepted it
   *  (when it had to be split: the part with the buttons, else the first). Throws when it was
   *  not accepted. */
  send(conversation: string, message: OutgoingMessage): Promise<{ messageId: string }>
  /** Replaces a sent message's text and removes its buttons (an answered or expired question). */
  edit(conversation: string, messageId: string, message: OutgoingMessage): Promise<void>
  /** Whether `error`, thrown by send or edit, means the platform refused the request itself and
   *  will refuse it again however often it is sent (Telegram 400 "chat not found", 403 "bot was
   *  blocked by the user"; a Slack platform error such as channel_not_found). The outbox fails
   *  such a message at once; any other error (network, timeout, 429, 5xx, anything unknown) is
   *  retried with backoff for as long as it takes. Without this method every error is transient. */
  isPermanent?(error: unknown): boolean
  /** A task's live tool-call summary; the adapter may show and edit a status message. */
  progress?(conversation: string, update: ProgressUpdate): void
  /** Work for this conversation started (true) or everything ended (false): "typing…". */
  activity?(conversation: string, busy: boolean): void
  /** Connected to the platform? Without this method a channel counts as always connected. */
  health?(): ChannelHealth
  stop(): Promise<void>
}

/** Thrown by an adapter for a message it can never post as it is (empty, a button id over the
 *  platform's limit): permanent for the outbox whatever the channel's `isPermanent` says. */
export class UndeliverableMessage extends Error {
  override name = "UndeliverableMessage"
}

export function channelOf(conversation: string): string {
  return conversation.slice(0, conversation.indexOf(":"))
}
