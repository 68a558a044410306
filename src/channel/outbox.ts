import type { Logger } from "pino"
import type { OutgoingMessage } from "../core/types.ts"
import type { OutboxRecord } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import type { Store, StoredRecords } from "../store/store.ts"
import { channelOf, type Channel } from "./channel.ts"
import { backoffMs, capped, classify } from "./delivery.ts"

/** The origin of the note that tells the user a message could not be sent. */
const UNDELIVERED = "undelivered:"

export interface OutboxOptions {
  /** Messages a reply may take before it is sent as its first part plus a file. */
  maxReplyMessages?: number
}

/** What the outbox tells its owner, fixed when it is made. */
export interface OutboxEvents {
  /** A sender finished: whether anything is still to send may have changed. */
  changed?: () => void
  /** A record was delivered (told before the record is written delivered: see send) or refused
   *  for good (after): a scheduled report's firing records it, and the owner hears of an
   *  undelivered report. Awaited, so the outbox counts as busy until it is done. */
  settled?: (record: OutboxRecord) => Promise<void> | void
}

/**
 * Every outbound message is written here before it is sent and marked delivered with the
 * platform's message id. A record that has an id is never sent again; one that has none is
 * sent (again) — after a failure with backoff, after a restart at once (or when its backoff
 * ends).
 *
 * Retry policy (see delivery.ts): a send that failed transiently (network, timeout, 429, 5xx,
 * any platform error the channel does not know to be permanent) is retried with backoff capped
 * at 5 minutes, with no limit on attempts, across restarts: an outage of any length delays
 * replies but loses none. A permanent refusal (`Channel.isPermanent`: the chat is gone, the bot
 * was blocked) or an `UndeliverableMessage` fails a record at once; `settled` reports it. An
 * error of the adapter's own code (a renderer's RangeError) is not the platform's: the message
 * goes once more as plain text, and if that throws too it is failed and the user is told in a
 * short plain note. Nothing but an outage holds a conversation's later messages up.
 *
 * A reply longer than `maxReplyMessages` of the channel's messages goes out as its first part
 * plus the whole text as a `.md` file.
 *
 * The send window: the process dies after the platform accepted a message and before its id
 * was written. A channel that can find its messages by the outbox id (`findSent`: Slack's
 * message metadata) is asked before such a record is sent again after a restart; with any
 * other (Telegram) the message is sent again. The window is kept to one awaited write: nothing
 * else happens between the send and the record. If that write fails, the record is delivered
 * in memory all the same (this process never sends it again) and the write is retried until
 * it lands.
 *
 * A reply the adapter had to split is one record. While the process lives, a retry of it
 * resumes after the parts that got out (the adapter remembers their ids in memory); after a
 * crash or restart in the middle of it, the whole reply is sent again.
 */
export class Outbox {
  /** The records still to send, oldest first: all the outbox keeps in memory. A record leaves
   *  once delivered or failed; it stays in the store (by id, origin and firing), so memory and
   *  the cost of a send do not grow with every message ever sent. */
  private pending = new Map<string, OutboxRecord>()
  private byOrigin = new Map<string, OutboxRecord>()
  /** Records found pending at start-up: they may have got out just before the stop. */
  private uncertain = new Set<string>()
  private readonly maxReplyMessages: number
  /** One sender per conversation keeps its messages in order. */
  private senders = new Map<string, Promise<void>>()
  private again = new Set<string>()
  private timers = new Set<NodeJS.Timeout>()
  /** Ends the pauses between attempts at a write, so stop() does not wait them out. */
  private wakers = new Set<() => void>()
  private stopped = false

  constructor(
    private readonly store: Store,
    private readonly channels: Map<string, Channel>,
    private readonly log: Logger,
    private readonly on: OutboxEvents = {},
    options: OutboxOptions = {},
  ) {
    this.maxReplyMessages = options.maxReplyMessages ?? 5
  }

  async load(): Promise<void> {
    for (const record of await this.store.outbox.unsent()) this.track(record)
    for (const record of this.pending.values()) {
      this.uncertain.add(record.id)
      this.kick(record.conversation)
    }
  }

  /** Queues a message for `conversation` unless `origin` already produced one. The message is
   *  recorded in the conversation's history in the same write, with whatever else `also` holds.
   *  `firingId`: the scheduled firing it reports. `fresh`: the origin cannot have produced a
   *  record before (a call of a step this run made, a new id), so the store is not asked —
   *  only a producer that may be replayed pays for that read. */
  async add(conversation: string, message: OutgoingMessage | string, origin: string, also: Partial<StoredRecords> = {}, firingId?: string, fresh = false): Promise<OutboxRecord> {
    const existing = this.byOrigin.get(origin) ?? (fresh ? undefined : await this.store.outbox.byOrigin(origin))
    if (existing) return existing
    const record = { ...this.prepare(conversation, message, origin), firingId }
    // The history says a file was sent (its name), beside the caption.
    const said = record.file ? [`[sent file ${record.file.name}]`, record.text].filter(Boolean).join(" ") : record.text
    await this.store.save({ ...also, outbox: [record, ...(also.outbox ?? [])], history: [{ id: record.id, conversation, role: "assistant", text: said }, ...(also.history ?? [])] })
    this.commit(record)
    return record
  }

  /** A record for `message`, to be written by the caller in its own save and then `commit`ted:
   *  for messages that must land together with another state change (a question's answer). */
  prepare(conversation: string, message: OutgoingMessage | string, origin: string, editOf?: string): OutboxRecord {
    const { text, buttons, file, plain, live } = typeof message === "string" ? { text: message, buttons: undefined, file: undefined, plain: undefined, live: undefined } : message
    return { id: newId(), origin, conversation, text, buttons, ...(file && { file }), ...(live && { live }), editOf, plain, status: "pending", attempts: 0, createdAt: new Date().toISOString() }
  }

  /** Starts sending a record the caller has written. */
  commit(record: OutboxRecord): void {
    this.track(record)
    this.kick(record.conversation)
  }

  /** Has a message been queued as this firing's report? (Every record is written before it is
   *  committed, so the store knows.) */
  async hasFiring(firingId: string): Promise<boolean> {
    return (await this.store.outbox.ofFiring(firingId)) !== undefined
  }

  /** The channels messages can go to. */
  channelNames(): string[] {
    return [...this.channels.keys()]
  }

  /** Messages written but not yet delivered (or failed). */
  get backlog(): number {
    return this.pending.size
  }

  /** True while a message could still go out without a new event (now or after a backoff). */
  get busy(): boolean {
    // A sender under way counts until its record's new state is written and reported.
    return this.senders.size > 0 || [...this.pending.values()].some((record) => this.channels.has(channelOf(record.conversation)))
  }

  /** Sends nothing more, and waits for sends under way so their ids are on record. */
  async stop(): Promise<void> {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
    for (const wake of this.wakers) wake()
    await Promise.allSettled(this.senders.values())
  }

  private track(record: OutboxRecord): void {
    // A Map keeps its first insertion order, so pending records stay in creation order.
    if (record.status === "pending") {
      this.pending.set(record.id, record)
      this.byOrigin.set(record.origin, record)
    } else {
      this.pending.delete(record.id)
      this.byOrigin.delete(record.origin)
    }
  }

  private nextPending(conversation: string): OutboxRecord | undefined {
    for (const record of this.pending.values()) if (record.conversation === conversation) return record
    return undefined
  }

  private kick(conversation: string): void {
    if (this.stopped) return
    if (this.senders.has(conversation)) {
      // The running sender may already have looked for work: have it look once more.
      this.again.add(conversation)
      return
    }
    const sender = this.drain(conversation)
      .catch((error) => this.log.error({ err: error, conversation }, "outbox sender failed; it resumes at the next message or restart"))
      .finally(() => {
        this.senders.delete(conversation)
        if (this.again.delete(conversation)) this.kick(conversation)
        this.on.changed?.()
      })
    this.senders.set(conversation, sender)
  }

  private async drain(conversation: string): Promise<void> {
    const channel = this.channels.get(channelOf(conversation))
    if (!channel) {
      this.log.warn({ conversation }, "no channel for this conversation; its messages wait until one runs")
      return
    }
    for (;;) {
      const next = this.nextPending(conversation)
      if (!next || this.stopped) return
      const due = next.nextAttemptAt ? Date.parse(next.nextAttemptAt) - Date.now() : 0
      if (due > 0) {
        // Later messages wait behind this one: order matters more than speed in a chat.
        const timer = setTimeout(() => {
          this.timers.delete(timer)
          this.kick(conversation)
        }, due)
        this.timers.add(timer)
        return
      }
      await this.send(channel, next)
    }
  }

  private async send(channel: Channel, record: OutboxRecord): Promise<void> {
    let update: OutboxRecord
    try {
      const found = this.uncertain.delete(record.id) ? await this.findSent(channel, record) : undefined
      const { messageId } = found ?? (await this.deliver(channel, record))
      update = { ...record, status: "delivered", messageId, attempts: record.attempts + 1, nextAttemptAt: undefined, error: undefined }
    } catch (error) {
      update = this.afterFailure(channel, record, error)
    }
    // In memory first: whatever becomes of the write, this process does not send it again.
    this.track(update)
    // A delivery is told before the record says so: a death between the two leaves the record
    // to be sent again (or found) and told again, never a delivered report its firing does not
    // know of. Awaited, so the sender (and `busy`) lasts until the report of it is on record too.
    if (update.status === "delivered") await this.on.settled?.(update)
    if (!(await this.persist(update))) return
    if (update.status === "failed" && update.plain && !update.origin.startsWith(UNDELIVERED)) await this.tellUndelivered(update)
    if (update.status === "failed") await this.on.settled?.(update)
  }

  /** A send of unknown outcome (pending at start-up), looked up where the channel can. A failed
   *  lookup is no answer: the message is sent, as it would be without the lookup. */
  private async findSent(channel: Channel, record: OutboxRecord): Promise<{ messageId: string } | undefined> {
    if (!channel.findSent || record.editOf) return undefined
    try {
      const found = await channel.findSent(record.conversation, record.id, new Date(Date.parse(record.createdAt) - 60_000))
      if (found) this.log.warn({ conversation: record.conversation, outbox: record.id }, "the message got out before the restart; not sent again")
      return found
    } catch (error) {
      this.log.warn({ err: error, conversation: record.conversation, outbox: record.id }, "could not look up whether a message got out before the restart; sending it")
      return undefined
    }
  }

  /** A refusal fails the record; an error of the adapter's own code sends it as plain text,
   *  once; anything else schedules the next attempt. */
  private afterFailure(channel: Channel, record: OutboxRecord, error: unknown): OutboxRecord {
    const attempts = record.attempts + 1
    const message = error instanceof Error ? error.message : String(error)
    const context = { conversation: record.conversation, outbox: record.id, attempts, err: message }
    const kind = classify(channel, error, (classifying) => this.log.error({ err: classifying, channel: channel.name }, "could not classify a send error; taking it as transient"))
    if (kind === "local" && !record.plain) {
      this.log.error({ ...context, err: error }, "could not send the message as formatted; sending it as plain text")
      return { ...record, attempts, error: message, plain: true, status: "pending", nextAttemptAt: undefined }
    }
    if (kind !== "transient") {
      this.log.error(context, kind === "local" ? "could not send the message even as plain text; giving up" : "the platform refused the message for good; it is not retried")
      return { ...record, attempts, error: message, status: "failed", nextAttemptAt: undefined }
    }
    const delay = backoffMs(attempts)
    this.log.warn({ ...context, retryInMs: delay }, "send failed; will retry")
    return { ...record, attempts, error: message, status: "pending", nextAttemptAt: new Date(Date.now() + delay).toISOString() }
  }

  /** Tells the user, in a short plain note after it, that a message of theirs could not be sent. */
  private async tellUndelivered(record: OutboxRecord): Promise<void> {
    const note = { text: "(A message could not be shown here because of an error. Please ask again in other words.)", plain: true }
    await this.add(record.conversation, note, `${UNDELIVERED}${record.id}`).catch((error) => this.log.error({ err: error, outbox: record.id }, "could not queue the note about an undelivered message"))
  }

  /** Writes a record's new state, retrying a failed write with backoff until it lands; once
   *  stopping, after one last try it gives up (false). Meanwhile the conversation's sender
   *  waits: at most one of its messages is ever delivered but not on record. */
  private async persist(update: OutboxRecord): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.store.save({ outbox: [update] })
        if (attempt > 1) this.log.warn({ outbox: update.id, attempt }, "the message's state is on record after all")
        return true
      } catch (error) {
        const context = { err: error, conversation: update.conversation, outbox: update.id, status: update.status, attempt }
        if (this.stopped) {
          const lost = update.status === "delivered" ? "; it was delivered and will be sent again after the restart" : ""
          this.log.error(context, `could not record the message's state${lost}`)
          return false
        }
        this.log.error(context, "could not record the message's state; retrying (it is not sent again meanwhile)")
        await this.pause(backoffMs(attempt))
      }
    }
  }

  /** Resolves after `ms`, or at once when the outbox stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.wakers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      this.wakers.add(wake)
    })
  }

  /** An edit goes to the message it edits; when that one never got out, the new text is sent
   *  as a message of its own so the user still sees it. Edits are idempotent, so a retried one
   *  does no harm. */
  private async deliver(channel: Channel, record: OutboxRecord): Promise<{ messageId: string }> {
    const target = record.editOf ? (this.pending.get(record.editOf) ?? (await this.store.outbox.record(record.editOf))) : undefined
    if (target?.messageId) {
      await channel.edit(record.conversation, target.messageId, { text: record.text, buttons: record.buttons })
      return { messageId: target.messageId }
    }
    const message = { text: record.text, buttons: record.buttons, ...(record.file && { file: record.file }), plain: record.plain || undefined, ref: record.id, live: record.live }
    return channel.send(record.conversation, capped(message, channel, this.maxReplyMessages))
  }
}
