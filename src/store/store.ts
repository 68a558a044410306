import { decodeTime, encodeTime, monotonicFactory } from "ulid"
import type { ChannelState } from "../channel/channel.ts"
import type { HistoryMessage, HistoryReader, TaskRecord } from "../core/types.ts"
import { Db } from "./db.ts"
import type { ConversationRecord, InboxEvent, MessageRecord, OutboxRecord, PairingRecord, QuestionRecord, SessionRecord } from "./records.ts"

/** ulid's default source asks the OS for one byte per character, 16 calls for an id of a new
 *  millisecond; this hands out the same kind of bytes from a pool refilled 4 KiB at a time. */
const pool = new Uint8Array(4096)
let drawn = pool.length
function pooledRandom(): number {
  if (drawn === pool.length) {
    crypto.getRandomValues(pool)
    drawn = 0
  }
  return pool[drawn++]! / 256
}

/** Ids sort in creation order, even within one millisecond. */
export const newId = monotonicFactory(pooledRandom)

/** Conversation ids contain ":" and may be prefixes of each other (a thread of a channel);
 *  encoding them keeps one conversation's key range from containing another's. */
const enc = encodeURIComponent

/**
 * Steward's state: one record per task, session, message, inbox event, outbox entry and
 * history line. Keys are laid out so that what is read together is one range scan.
 */
export class Store implements HistoryReader {
  private constructor(readonly db: Db) {}

  static async open(dataDir: string): Promise<Store> {
    return new Store(await Db.open(dataDir))
  }

  close(): Promise<void> {
    return this.db.close()
  }

  /** Writes every record given, in one atomic statement (see Db.write). */
  save(records: Partial<StoredRecords>): Promise<void> {
    const entries: Array<[string, unknown]> = []
    for (const task of records.tasks ?? []) entries.push([`task/${task.id}`, task])
    for (const session of records.sessions ?? []) entries.push([`session/${session.id}`, session])
    for (const message of records.messages ?? []) entries.push([`msg/${message.sessionId}/${message.id}`, message])
    for (const event of records.events ?? []) entries.push([`event/${event.id}`, event])
    for (const id of records.eventsDone ?? []) entries.push([`event/${id}`, null])
    for (const conversation of records.conversations ?? []) entries.push([`conv/${enc(conversation.id)}`, conversation])
    for (const entry of records.outbox ?? []) entries.push([`outbox/${entry.id}`, entry])
    for (const line of records.history ?? []) entries.push([`hist/${enc(line.conversation)}/${line.id}`, line])
    for (const question of records.questions ?? []) entries.push([`question/${question.id}`, question])
    for (const id of records.seen ?? []) entries.push([`seen/${id}`, { at: Date.now() }])
    for (const pairing of records.pairings ?? []) entries.push([`pairing/${pairing.code}`, pairing])
    for (const code of records.pairingsDone ?? []) entries.push([`pairing/${code}`, null])
    for (const user of records.allowed ?? []) entries.push([`allow/${enc(user)}`, { user, at: new Date().toISOString() }])
    return this.db.write(entries)
  }

  questions(): Promise<QuestionRecord[]> {
    return this.db.scan("question/")
  }
  /** Was this platform event id taken before? */
  async seen(eventId: string): Promise<boolean> {
    return (await this.db.get(`seen/${eventId}`)) !== undefined
  }
  pairings(): Promise<PairingRecord[]> {
    return this.db.scan("pairing/")
  }
  async allowed(user: string): Promise<boolean> {
    return (await this.db.get(`allow/${enc(user)}`)) !== undefined
  }
  tasks(): Promise<TaskRecord[]> {
    return this.db.scan("task/")
  }
  events(): Promise<InboxEvent[]> {
    return this.db.scan("event/")
  }
  outbox(): Promise<OutboxRecord[]> {
    return this.db.scan("outbox/")
  }
  /** One outbox record, for an edit of a message the outbox no longer keeps in memory. */
  outboxRecord(id: string): Promise<OutboxRecord | undefined> {
    return this.db.get(`outbox/${id}`)
  }
  /** A channel adapter's own durable entries, apart from everything else. */
  channelState(channel: string): ChannelState {
    const prefix = `chan/${enc(channel)}/`
    return {
      set: (key, value) => this.db.write([[prefix + key, { key, value }]]),
      delete: (key) => this.db.write([[prefix + key, null]]),
      list: <T>(start: string) => this.db.scan<{ key: string; value: T }>(prefix + start),
    }
  }

  conversations(): Promise<ConversationRecord[]> {
    return this.db.scan("conv/")
  }

  conversation(id: string): Promise<ConversationRecord | undefined> {
    return this.db.get(`conv/${enc(id)}`)
  }
  session(id: string): Promise<SessionRecord | undefined> {
    return this.db.get(`session/${id}`)
  }
  messages(sessionId: string): Promise<MessageRecord[]> {
    return this.db.scan(`msg/${sessionId}/`)
  }

  async recent(conversation: string, count: number, offset: number): Promise<HistoryMessage[]> {
    // SQLite reads a negative LIMIT as "no limit": never more than asked for, whatever the caller.
    const lines = await this.db.scan<HistoryLine>(`hist/${enc(conversation)}/`, { desc: true, limit: Math.max(0, count), offset: Math.max(0, offset) })
    return lines.reverse().map(toMessage)
  }

  async between(conversation: string, after: Date, before: Date): Promise<HistoryMessage[]> {
    // History ids are ULIDs of their creation time, so a time window is a key range.
    const lines = await this.db.scan<HistoryLine>(`hist/${enc(conversation)}/`, {
      from: encodeTime(Math.max(0, after.getTime())),
      to: `${encodeTime(Math.max(0, before.getTime()))}\uffff`,
    })
    return lines
      .filter((line) => {
        const at = decodeTime(line.id)
        return at >= after.getTime() && at <= before.getTime()
      })
      .map(toMessage)
  }
}

/** A user message or a reply, kept per conversation for the history tools. */
export interface HistoryLine {
  id: string
  conversation: string
  role: "user" | "assistant"
  text: string
}

export interface StoredRecords {
  tasks: TaskRecord[]
  sessions: SessionRecord[]
  messages: MessageRecord[]
  events: InboxEvent[]
  eventsDone: string[]
  conversations: ConversationRecord[]
  outbox: OutboxRecord[]
  history: HistoryLine[]
  questions: QuestionRecord[]
  /** Platform event ids taken (Telegram update ids, Slack event ids). */
  seen: string[]
  pairings: PairingRecord[]
  pairingsDone: string[]
  /** Users the owner approved by pairing code. */
  allowed: string[]
}

function toMessage(line: HistoryLine): HistoryMessage {
  return { role: line.role, text: line.text, createdAt: new Date(decodeTime(line.id)).toISOString() }
}
