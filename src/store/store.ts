import { decodeTime, monotonicFactory } from "ulid"
import type { ChannelState } from "../channel/channel.ts"
import type { FiringRecord, HistoryMessage, HistoryReader, TaskRecord, TriggerRecord } from "../core/types.ts"
import type { RaisedRecord } from "../schedule/records.ts"
import type { Backend, IndexQuery, WriteOp } from "./backend.ts"
import * as c from "./collections.ts"
import { put, remove, type AllowedRecord, type Collection, type HistoryLine, type ProfileRecord, type RaisedName, type SeenRecord } from "./collections.ts"
import { migrate } from "./migrations.ts"
import type { ControlRecord, ConversationRecord, ErrorRecord, InboxEvent, MessageRecord, OutboxRecord, PairingRecord, QuestionRecord, SessionRecord } from "./records.ts"
import type { UsageSample } from "../usage/usage.ts"
import { SqliteBackend } from "./sqlite.ts"
import { ClusterRecords } from "./cluster-records.ts"

export type { HistoryLine } from "./collections.ts"

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

/** Platform event ids are kept this long for dedupe: Slack retries within an hour, Telegram
 *  keeps an undelivered update for 24 h. */
export const SEEN_RETENTION_MS = 24 * 3600_000
const PRUNE_EVERY_MS = 3600_000
/** Event ids numbered in order per stream: `telegram:<update_id>`. */
const SEQUENTIAL = /^(telegram):(\d+)$/
const PAGE = 1000
/** The errors `steward status` can show; older ones are dropped as new ones come. */
export const ERRORS_KEPT = 50

/**
 * Steward's state, the one way to it: named collections of typed records (collections.ts) on a
 * Backend (backend.ts; SQLite in sqlite.ts, Postgres in postgres.ts). Start-up reads only what is live — queued, running
 * and unreported tasks, unsent messages, open questions, live triggers — and everything that
 * ended stays on disk behind an index (by conversation and time, by origin, by firing).
 */
export class Store implements HistoryReader {
  private marks = new Map<string, number>()
  private lastPrune = 0

  /** The cluster's own records (processes, task claims). */
  readonly cluster: ClusterRecords
  constructor(private readonly backend: Backend) {
    this.cluster = new ClusterRecords(backend)
  }

  /** Opens the Postgres database at `storeUrl` when one is given, else `DATA_DIR/steward.sqlite`,
   *  migrating older data in place; throws NewerDataError on data written by a newer Steward. */
  static async open(dataDir: string, storeUrl?: string): Promise<Store> {
    // Postgres migrates under its schema lock, as other processes may start at the same time.
    // Postgres's driver is loaded only for a store on Postgres: it costs every other start time.
    if (storeUrl) return new Store(await (await import("./postgres.ts")).PostgresBackend.open(storeUrl, c.SCHEMA, (backend) => migrate(backend)))
    const backend = await SqliteBackend.open(dataDir, c.SCHEMA)
    try {
      await migrate(backend)
    } catch (error) {
      await backend.close()
      throw error
    }
    return new Store(backend)
  }

  close(): Promise<void> {
    return this.backend.close()
  }

  /** Writes every record given, atomically (see Backend.write). */
  save(records: Partial<StoredRecords>): Promise<void> {
    const ops: WriteOp[] = []
    const add = <T>(collection: Collection<T>, list: T[] | undefined) => {
      for (const record of list ?? []) ops.push(put(collection, record))
    }
    add(c.tasks, records.tasks)
    add(c.sessions, records.sessions)
    add(c.messages, records.messages)
    add(c.events, records.events)
    for (const id of records.eventsDone ?? []) ops.push(remove(c.events, id))
    add(c.conversations, records.conversations)
    add(c.outbox, records.outbox)
    add(c.history, records.history)
    add(c.questions, records.questions)
    const at = new Date().toISOString()
    add(c.seen, records.seen?.map((id) => ({ id, at })))
    add(c.pairings, records.pairings)
    for (const code of records.pairingsDone ?? []) ops.push(remove(c.pairings, code))
    add(c.allowed, records.allowed?.map((user) => ({ user, at })))
    add(c.triggers, records.triggers)
    add(c.firings, records.firings)
    add(c.profiles, records.profiles)
    const written = this.backend.write(ops)
    if (records.seen?.length && Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = Date.now()
      // In the background: a failed prune is tried again an hour later.
      void written.then(() => this.pruneSeen()).catch(() => {})
    }
    return written
  }

  // ── tasks ──────────────────────────────────────────────────────────────────

  /** Every task ever recorded, oldest first (the CLI and tests; start-up uses liveTasks). */
  tasks(): Promise<TaskRecord[]> {
    return this.all(c.tasks)
  }
  /** What start-up needs: live tasks (see isLiveTask), the batch heads of live tasks and every
   *  task those heads committed — so a batch can still be reported as a whole. Oldest first. */
  async liveTasks(): Promise<TaskRecord[]> {
    const found = new Map<string, TaskRecord>()
    for (const task of await this.index(c.tasks, { index: "live", group: "" })) found.set(task.id, task)
    const fetch = async (ids: Iterable<string>) => {
      for (const id of ids) {
        const task = found.has(id) ? undefined : await this.task(id)
        if (task) found.set(id, task)
      }
    }
    await fetch(new Set([...found.values()].flatMap((task) => (task.parentTaskId ? [task.parentTaskId] : []))))
    await fetch(new Set([...found.values()].flatMap((task) => task.children ?? [])))
    return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }
  task(id: string): Promise<TaskRecord | undefined> {
    return this.get(c.tasks, id)
  }
  async taskByOrigin(origin: string): Promise<TaskRecord | undefined> {
    return (await this.index(c.tasks, { index: "origin", group: origin, limit: 1 }))[0]
  }
  /** A conversation's ended tasks, newest first, `limit` at a time; `before` (an endedAt) pages on. */
  finishedTasks(conversation: string, page: { limit: number; before?: string }): Promise<TaskRecord[]> {
    const to = page.before === undefined ? undefined : Date.parse(page.before) - 1
    return this.index(c.tasks, { index: "finished", group: conversation, to, desc: true, limit: page.limit })
  }

  // ── conversations, sessions, inbox ─────────────────────────────────────────

  events(): Promise<InboxEvent[]> {
    return this.index(c.events, { index: "all", group: "" })
  }
  conversations(): Promise<ConversationRecord[]> {
    return this.all(c.conversations)
  }
  conversation(id: string): Promise<ConversationRecord | undefined> {
    return this.get(c.conversations, id)
  }
  session(id: string): Promise<SessionRecord | undefined> {
    return this.get(c.sessions, id)
  }
  messages(sessionId: string): Promise<MessageRecord[]> {
    return this.index(c.messages, { index: "session", group: sessionId })
  }

  // ── outbox ─────────────────────────────────────────────────────────────────

  /** Every outbox record, oldest first (tests; the Outbox loads unsentOutbox). */
  outbox(): Promise<OutboxRecord[]> {
    return this.all(c.outbox)
  }
  /** Records still to send, oldest first. Delivered and failed ones stay on disk: an edit finds
   *  the message it edits, a replayed producer its record, a firing its report. */
  unsentOutbox(): Promise<OutboxRecord[]> {
    return this.index(c.outbox, { index: "unsent", group: "" })
  }
  outboxRecord(id: string): Promise<OutboxRecord | undefined> {
    return this.get(c.outbox, id)
  }
  async outboxByOrigin(origin: string): Promise<OutboxRecord | undefined> {
    return (await this.index(c.outbox, { index: "origin", group: origin, limit: 1 }))[0]
  }
  async outboxOfFiring(firingId: string): Promise<OutboxRecord | undefined> {
    return (await this.index(c.outbox, { index: "firing", group: firingId, limit: 1 }))[0]
  }

  // ── questions, access, dedupe ──────────────────────────────────────────────

  /** Every question (tests); the Questions load openQuestions. */
  questions(): Promise<QuestionRecord[]> {
    return this.all(c.questions)
  }
  openQuestions(): Promise<QuestionRecord[]> {
    return this.index(c.questions, { index: "open", group: "" })
  }
  async questionByOrigin(origin: string): Promise<QuestionRecord | undefined> {
    return (await this.index(c.questions, { index: "origin", group: origin, limit: 1 }))[0]
  }
  pairings(): Promise<PairingRecord[]> {
    return this.all(c.pairings)
  }
  pairing(code: string): Promise<PairingRecord | undefined> {
    return this.get(c.pairings, code)
  }
  async allowed(user: string): Promise<boolean> {
    return (await this.get(c.allowed, user)) !== undefined
  }

  /** Was this platform event id taken before? Ids are kept SEEN_RETENTION_MS; a Telegram update
   *  at or below the highest pruned update_id is recognised as old too. */
  async seen(eventId: string): Promise<boolean> {
    if ((await this.get(c.seen, eventId)) !== undefined) return true
    const sequential = SEQUENTIAL.exec(eventId)
    return sequential !== null && Number(sequential[2]) <= (await this.mark(sequential[1]!))
  }
  /** Drops event ids older than the retention window, raising each stream's mark to match. */
  async pruneSeen(now = Date.now()): Promise<number> {
    let pruned = 0
    for (;;) {
      const old = await this.index(c.seen, { index: "time", group: "", to: now - SEEN_RETENTION_MS, limit: PAGE })
      if (old.length === 0) return pruned
      const raised = new Map<string, number>()
      for (const record of old) {
        const sequential = SEQUENTIAL.exec(record.id)
        if (sequential) raised.set(sequential[1]!, Math.max(Number(sequential[2]), raised.get(sequential[1]!) ?? (await this.mark(sequential[1]!))))
      }
      await this.backend.write([...old.map((record: SeenRecord) => remove(c.seen, record.id)), ...[...raised].map(([stream, mark]) => put(c.seenMarks, { stream, mark }))])
      for (const [stream, mark] of raised) this.marks.set(stream, mark)
      pruned += old.length
    }
  }

  /** Whether the store takes writes (the health check): one small record, rewritten. */
  async probe(): Promise<void> {
    await this.backend.write([put(c.meta, { id: "probe", at: new Date().toISOString() })])
  }

  /** A channel adapter's own durable entries, apart from everything else. */
  channelState(channel: string): ChannelState {
    return {
      set: (key, value) => this.backend.write([put(c.channelEntries, { channel, key, value })]),
      delete: (key) => this.backend.write([remove(c.channelEntries, c.channelEntries.id({ channel, key, value: null }))]),
      list: async <T>(prefix: string) =>
        (await this.index(c.channelEntries, { index: "channel", group: channel }))
          .filter((entry) => entry.key.startsWith(prefix))
          .map((entry) => ({ key: entry.key, value: entry.value as T })),
    }
  }

  // ── schedules ──────────────────────────────────────────────────────────────

  /** Every trigger ever created (the CLI and tests; start-up uses liveTriggers). */
  triggers(): Promise<TriggerRecord[]> {
    return this.all(c.triggers)
  }
  /** Active triggers, and ended ones whose last run is still under way. */
  liveTriggers(): Promise<TriggerRecord[]> {
    return this.index(c.triggers, { index: "live", group: "" })
  }
  trigger(id: string): Promise<TriggerRecord | undefined> {
    return this.get(c.triggers, id)
  }
  async triggerByOrigin(origin: string): Promise<TriggerRecord | undefined> {
    return (await this.index(c.triggers, { index: "origin", group: origin, limit: 1 }))[0]
  }
  firing(id: string): Promise<FiringRecord | undefined> {
    return this.get(c.firings, id)
  }
  /** A trigger's firings, oldest first. */
  firingsOf(triggerId: string): Promise<FiringRecord[]> {
    return this.index(c.firings, { index: "trigger", group: triggerId })
  }
  /** Every user profile (time zones), read once at start-up. */
  profiles(): Promise<ProfileRecord[]> {
    return this.all(c.profiles)
  }
  /** Records a raised event, and the latest raising of its name in the same write. */
  async raise(name: string): Promise<RaisedRecord> {
    const record: RaisedRecord = { id: newId(), name, at: new Date().toISOString() }
    const latest = await this.get(c.raisedNames, name)
    const newer = !latest || Date.parse(latest.at) <= Date.parse(record.at)
    await this.backend.write([put(c.raised, record), ...(newer ? [put(c.raisedNames, { name, at: record.at, id: record.id })] : [])])
    return record
  }
  /** The latest raising of every event name. */
  raisedNames(): Promise<RaisedName[]> {
    return this.all(c.raisedNames)
  }
  /** Events raised at or after `since` (ms), by the time in their id. */
  raisedSince(since: number): Promise<RaisedRecord[]> {
    return this.index(c.raised, { index: "time", group: "", from: since })
  }

  // ── what the owner CLI reads and asks ───────────────────────────────────────

  recordUsage(sample: UsageSample): Promise<void> {
    return this.backend.write([put(c.usage, { ...sample, id: newId() })])
  }
  /** Usage samples taken at or after `since` (ms), oldest first. */
  usageSince(since: number): Promise<UsageSample[]> {
    return this.index(c.usage, { index: "time", group: "", from: since })
  }
  /** Keeps an error for `steward status`; only the latest ERRORS_KEPT stay. */
  async recordError(error: Omit<ErrorRecord, "id">): Promise<void> {
    await this.backend.write([put(c.errors, { id: newId(), ...error })])
    const older = await this.index(c.errors, { index: "time", group: "", desc: true, offset: ERRORS_KEPT })
    if (older.length > 0) await this.backend.write(older.map((record) => remove(c.errors, record.id)))
  }
  /** The latest errors, newest first. */
  recentErrors(limit: number): Promise<ErrorRecord[]> {
    return this.index(c.errors, { index: "time", group: "", desc: true, limit })
  }
  /** The users approved by pairing code (not the owners of ALLOWED_USERS). */
  allowedUsers(): Promise<AllowedRecord[]> {
    return this.all(c.allowed)
  }
  revoke(user: string): Promise<void> {
    return this.backend.write([remove(c.allowed, user)])
  }
  async requestControl(kind: ControlRecord["kind"], target: string): Promise<ControlRecord> {
    const record: ControlRecord = { id: newId(), kind, target, at: new Date().toISOString(), status: "pending" }
    await this.backend.write([put(c.controls, record)])
    return record
  }
  /** Controls not applied yet, oldest first. */
  pendingControls(): Promise<ControlRecord[]> {
    return this.index(c.controls, { index: "pending", group: "" })
  }
  control(id: string): Promise<ControlRecord | undefined> {
    return this.get(c.controls, id)
  }
  settleControl(record: ControlRecord): Promise<void> {
    return this.backend.write([put(c.controls, record)])
  }
  /** A consistent copy of the whole store in a new file, taken while Steward runs. */
  backup(file: string): Promise<void> {
    return this.backend.backup(file)
  }

  // ── history ────────────────────────────────────────────────────────────────

  async recent(conversation: string, count: number, offset: number): Promise<HistoryMessage[]> {
    // Never more than asked for, whatever the caller passes.
    const lines = await this.index(c.history, { index: "conversation", group: conversation, desc: true, limit: Math.max(0, count), offset: Math.max(0, offset) })
    return lines.reverse().map(toMessage)
  }

  async between(conversation: string, after: Date, before: Date): Promise<HistoryMessage[]> {
    const lines = await this.index(c.history, { index: "conversation", group: conversation, from: after.getTime(), to: before.getTime() })
    return lines.map(toMessage)
  }

  // ── plumbing ───────────────────────────────────────────────────────────────

  private async get<T>(collection: Collection<T>, id: string): Promise<T | undefined> {
    return (await this.backend.get(collection.name, id)) as T | undefined
  }

  private async index<T>(collection: Collection<T>, query: IndexQuery): Promise<T[]> {
    return (await this.backend.list(collection.name, query)) as T[]
  }

  private async all<T>(collection: Collection<T>): Promise<T[]> {
    const records: T[] = []
    for (let after: string | undefined; ; ) {
      const rows = await this.backend.page(collection.name, { after, limit: PAGE })
      records.push(...rows.map((row) => row.value as T))
      if (rows.length < PAGE) return records
      after = rows.at(-1)!.id
    }
  }

  private async mark(stream: string): Promise<number> {
    let mark = this.marks.get(stream)
    if (mark === undefined) {
      mark = (await this.get(c.seenMarks, stream))?.mark ?? -1
      this.marks.set(stream, mark)
    }
    return mark
  }
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
  triggers: TriggerRecord[]
  firings: FiringRecord[]
  profiles: ProfileRecord[]
}

function toMessage(line: HistoryLine): HistoryMessage {
  return { role: line.role, text: line.text, createdAt: new Date(decodeTime(line.id)).toISOString() }
}
