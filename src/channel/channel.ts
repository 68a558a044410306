import type { CommandInfo, ConversationId, InboundMessage, InboundOutcome, OutgoingMessage, ProgressUpdate, UserId } from "../core/types.ts"

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
  /** Resolves once the core has durably taken the message (or decided to ignore it), with a
   *  note for the sender alone when there is one; rejects when the core could not store it —
   *  the adapter then leaves the platform event unacknowledged, so the platform delivers it again. */
  onMessage(message: InboundMessage): Promise<InboundOutcome | void>
  commands: CommandInfo[]
  /** This channel's conversations Steward already takes part in, so that after a restart an
   *  adapter still recognises them (a Slack thread it follows needs no new mention). */
  conversations?: ConversationId[]
  /** This channel's owners (`<channel>:<user-id>` from ALLOWED_USERS): they see owner-only commands. */
  owners?: UserId[]
  state?: ChannelState
  /** Clear what an earlier run left shown (status messages, busy indicators) — the default. A
   *  cluster process that does not lead shows nothing and must leave the leader's alone: it
   *  passes false, and calls `tidy()` once it leads. */
  tidy?: boolean
}

/**
 * An answer shown while it is being written (a Telegram draft, a Slack stream, or a message
 * edited as it grows). It never stands for the answer: the final message is sent through the
 * outbox as any other, with `OutgoingMessage.live` naming it, and the adapter ends what it
 * showed in that message — or takes it away. The adapter paces the platform calls.
 */
export interface LiveText {
  /** The whole text so far (not a delta); cheap to call on every token. */
  update(text: string): void
  /** Not an answer after all (the step went on to call tools, the turn failed): take it away. */
  discard(): void
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
  /** Only one process may take this channel's input (Telegram's getUpdates allows one consumer;
   *  a terminal has one reader): in a cluster only the leader starts it. Without it, every
   *  process may (Slack events, webhooks: the platform spreads them, inbound dedupe is shared). */
  readonly exclusive?: boolean
  start(handlers: ChannelHandlers): Promise<void>
  /** Posts one message; resolves with the platform's id for it once the platform accepted it
   *  (when it had to be split: the part with the buttons, else the first). Throws when it was
   *  not accepted. */
  send(conversation: ConversationId, message: OutgoingMessage): Promise<{ messageId: string }>
  /** Replaces a sent message's text and removes its buttons (an answered or expired question). */
  edit(conversation: ConversationId, messageId: string, message: OutgoingMessage): Promise<void>
  /** Whether `error`, thrown by send or edit, means the platform refused the request itself and
   *  will refuse it again however often it is sent (Telegram 400 "chat not found", 403 "bot was
   *  blocked by the user"; a Slack platform error such as channel_not_found). The outbox fails
   *  such a message at once; any other error (network, timeout, 429, 5xx, anything unknown) is
   *  retried with backoff for as long as it takes. Without this method every error is transient. */
  isPermanent?(error: unknown): boolean
  /** Characters of text one message holds: a reply longer than a few messages is sent as its
   *  first part plus a file (the adapter sends `OutgoingMessage.attachment` with its platform's
   *  document upload). Without it, replies are never capped. */
  readonly messageLimit?: number
  /** Looks for a message this channel posted with `ref` since `since`: after a restart, a send
   *  that may have got out before the crash is found instead of sent twice. */
  findSent?(conversation: ConversationId, ref: string, since: Date): Promise<{ messageId: string } | undefined>
  /** What a batch of delegated work is doing (title, start, tool calls, a Stop button) and, with
   *  state "done", how it ended; the adapter may show one status message per batch, edited in place. */
  progress?(conversation: ConversationId, update: ProgressUpdate): void
  /** Starts showing an answer to `user` as it is written; `id` is the core's name for it,
   *  passed again as `OutgoingMessage.live` with the final message. */
  live?(conversation: ConversationId, id: string, user: UserId): LiveText
  /** Work for this conversation started (true) or everything ended (false): "typing…". */
  activity?(conversation: ConversationId, busy: boolean): void
  /** Clears what a process that stopped left shown (after a start with `tidy: false`). */
  tidy?(): Promise<void>
  /** Connected to the platform? Without this method a channel counts as always connected. */
  health?(): ChannelHealth
  stop(): Promise<void>
}

/** Thrown by an adapter for a message it can never post as it is (empty, a button id over the
 *  platform's limit): permanent for the outbox whatever the channel's `isPermanent` says. */
export class UndeliverableMessage extends Error {
  override name = "UndeliverableMessage"
}

export function channelOf(conversation: ConversationId): string {
  return conversation.slice(0, conversation.indexOf(":"))
}

/** Thrown by an attachment's `download` when the file turns out larger than it was allowed to be. */
export class FileTooLarge extends Error {
  override name = "FileTooLarge"
  constructor(readonly maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`)
  }
}

/** A download's body, read until it exceeds `maxBytes` (then the download is cancelled and
 *  FileTooLarge thrown): a size announced wrongly, or not at all, cannot fill the disk. */
export async function readLimited(response: Response, maxBytes: number): Promise<Uint8Array> {
  if (!response.ok || !response.body) throw new Error(`download failed: HTTP ${response.status}`)
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return Buffer.concat(chunks)
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => {})
      throw new FileTooLarge(maxBytes)
    }
    chunks.push(value)
  }
}

/**
 * Cuts plain text into parts of at most `limit` characters: at the last blank line before the
 * limit, else the last line end, else the last space, else at the limit. A loop, not recursion:
 * any length and any content.
 */
export function splitPlain(text: string, limit: number): string[] {
  const parts: string[] = []
  let rest = text.trim()
  while (rest.length > limit) {
    const window = rest.slice(0, limit)
    const cut = [window.lastIndexOf("\n\n"), window.lastIndexOf("\n"), window.lastIndexOf(" ")].find((at) => at > limit / 2) ?? limit
    parts.push(rest.slice(0, cut).trimEnd())
    rest = rest.slice(cut).trimStart()
  }
  if (rest) parts.push(rest)
  return parts
}
