import type { Logger } from "pino"
import { channelOf, type Channel, type OutgoingMessage } from "../channel/channel.ts"
import type { OutboxRecord } from "../store/records.ts"
import { newId, type Store, type StoredRecords } from "../store/store.ts"

/** Backoff for a failed send: 1 s doubling to 5 min; after this many attempts it is given up. */
const FIRST_RETRY_MS = 1000
const MAX_RETRY_MS = 5 * 60_000
export const MAX_SEND_ATTEMPTS = 10

/**
 * Every outbound message is written here before it is sent and marked delivered with the
 * platform's message id. A record that has an id is never sent again; one that has none is
 * sent (again) — after a failure with backoff, after a restart at once.
 *
 * The one window that cannot be closed: the process dies after the platform accepted a
 * message and before its id was written. That message is sent again on restart. The window
 * is kept to one awaited write: nothing else happens between the send and the record.
 */
export class Outbox {
  private records = new Map<string, OutboxRecord>()
  private byOrigin = new Map<string, OutboxRecord>()
  /** One sender per conversation keeps its messages in order. */
  private senders = new Map<string, Promise<void>>()
  private again = new Set<string>()
  private timers = new Set<NodeJS.Timeout>()
  private stopped = false

  constructor(
    private readonly store: Store,
    private readonly channels: Map<string, Channel>,
    private readonly log: Logger,
    private readonly onChange: () => void,
  ) {}

  /** Told when a record is delivered or given up (a scheduled report's firing records it). */
  onSettled: (record: OutboxRecord) => void = () => {}

  async load(): Promise<void> {
    for (const record of await this.store.outbox()) this.track(record)
    for (const record of this.records.values()) if (record.status === "pending") this.kick(record.conversation)
  }

  /** Queues a message for `conversation` unless `origin` already produced one. The message is
   *  recorded in the conversation's history in the same write, with whatever else `also` holds. */
  async add(conversation: string, message: OutgoingMessage | string, origin: string, also: Partial<StoredRecords> = {}, firingId?: string): Promise<OutboxRecord> {
    const existing = this.byOrigin.get(origin)
    if (existing) return existing
    const record = { ...this.prepare(conversation, message, origin), firingId }
    await this.store.save({ ...also, outbox: [record, ...(also.outbox ?? [])], history: [{ id: record.id, conversation, role: "assistant", text: record.text }, ...(also.history ?? [])] })
    this.commit(record)
    return record
  }

  /** A record for `message`, to be written by the caller in its own save and then `commit`ted:
   *  for messages that must land together with another state change (a question's answer). */
  prepare(conversation: string, message: OutgoingMessage | string, origin: string, editOf?: string): OutboxRecord {
    const { text, buttons } = typeof message === "string" ? { text: message, buttons: undefined } : message
    return { id: newId(), origin, conversation, text, buttons, editOf, status: "pending", attempts: 0, createdAt: new Date().toISOString() }
  }

  /** Starts sending a record the caller has written. */
  commit(record: OutboxRecord): void {
    this.track(record)
    this.kick(record.conversation)
  }

  /** Has a message been queued as this firing's report? */
  hasFiring(firingId: string): boolean {
    for (const record of this.records.values()) if (record.firingId === firingId) return true
    return false
  }

  /** The channels messages can go to. */
  channelNames(): string[] {
    return [...this.channels.keys()]
  }

  /** True while a message could still go out without a new event (now or after a backoff). */
  get busy(): boolean {
    return [...this.records.values()].some((record) => record.status === "pending" && this.channels.has(channelOf(record.conversation)))
  }

  /** Sends nothing more, and waits for sends under way so their ids are on record. */
  async stop(): Promise<void> {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
    await Promise.allSettled(this.senders.values())
  }

  private track(record: OutboxRecord): void {
    this.records.set(record.id, record)
    this.byOrigin.set(record.origin, record)
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
        this.onChange()
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
      const next = [...this.records.values()].find((r) => r.conversation === conversation && r.status === "pending")
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
      const { messageId } = await this.deliver(channel, record)
      update = { ...record, status: "delivered", messageId, attempts: record.attempts + 1, nextAttemptAt: undefined, error: undefined }
    } catch (error) {
      const attempts = record.attempts + 1
      const message = error instanceof Error ? error.message : String(error)
      const failed = attempts >= MAX_SEND_ATTEMPTS
      this.log[failed ? "error" : "warn"]({ conversation: record.conversation, outbox: record.id, attempts, err: message }, failed ? "message given up" : "send failed; will retry")
      const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (attempts - 1))
      update = { ...record, attempts, error: message, status: failed ? "failed" : "pending", nextAttemptAt: failed ? undefined : new Date(Date.now() + delay).toISOString() }
    }
    await this.store.save({ outbox: [update] })
    this.track(update)
    if (update.status !== "pending") this.onSettled(update)
  }

  /** An edit goes to the message it edits; when that one never got out, the new text is sent
   *  as a message of its own so the user still sees it. Edits are idempotent, so a retried one
   *  does no harm. */
  private async deliver(channel: Channel, record: OutboxRecord): Promise<{ messageId: string }> {
    const message = { text: record.text, buttons: record.buttons }
    const target = record.editOf ? this.records.get(record.editOf) : undefined
    if (target?.messageId) {
      await channel.edit(record.conversation, target.messageId, message)
      return { messageId: target.messageId }
    }
    return channel.send(record.conversation, message)
  }
}
