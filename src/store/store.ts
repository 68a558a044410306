import type { ChannelState } from "../channel/channel.ts"
import type { FiringRecord, TaskRecord, TriggerRecord } from "../core/types.ts"
import type { Backend, WriteOp } from "./backend.ts"
import * as c from "./collections.ts"
import { put, remove, type Collection, type HistoryLine, type ProfileRecord, type SeenRecord } from "./collections.ts"
import { migrate } from "./migrations.ts"
import type { ConversationRecord, InboxEvent, MessageRecord, OutboxRecord, PairingRecord, QuestionRecord, SessionRecord } from "./records.ts"
import type { PostgresOptions } from "./postgres.ts"
import { SqliteBackend } from "./sqlite.ts"
import { BackendReads, PAGE } from "./reads.ts"
import { ClusterRecords } from "./cluster-records.ts"
import { HistoryRecords } from "./history-records.ts"
import { OutboxRecords } from "./outbox-records.ts"
import { OwnerRecords } from "./owner-records.ts"
import { QuestionRecords } from "./question-records.ts"
import { ScheduleRecords } from "./schedule-records.ts"
import { UserRecords } from "./user-records.ts"

export type { HistoryLine } from "./collections.ts"

/** Platform event ids are kept this long for dedupe: Slack retries within an hour, Telegram
 *  keeps an undelivered update for 24 h. */
export const SEEN_RETENTION_MS = 24 * 3600_000
const PRUNE_EVERY_MS = 3600_000
/** Event ids numbered in order per stream: `telegram:<update_id>`. */
const SEQUENTIAL = /^(telegram):(\d+)$/

/**
 * Steward's state, the one way to it: named collections of typed records (collections.ts) on a
 * Backend (backend.ts; SQLite in sqlite.ts, Postgres in postgres.ts). Start-up reads only what is live — queued, running
 * and unreported tasks, unsent messages, open questions, live triggers — and everything that
 * ended stays on disk behind an index (by conversation and time, by origin, by firing).
 *
 * The Store itself writes (`save`, one atomic batch of any records) and reads the Supervisor's
 * own: tasks, conversations, sessions and their messages, the inbox, the platform event ids
 * taken. Every other kind of record is read, and written when alone, through its own part
 * below, on the same Backend.
 */
export class Store extends BackendReads {
  private marks = new Map<string, number>()
  private lastPrune = 0

  /** The cluster's own records (processes, task claims). */
  readonly cluster: ClusterRecords
  /** Triggers, their firings, raised events. */
  readonly schedules: ScheduleRecords
  /** Messages to send, edit or delete on a platform. */
  readonly outbox: OutboxRecords
  /** The questions agents asked users. */
  readonly questions: QuestionRecords
  /** Pairing codes, approved users, user profiles. */
  readonly users: UserRecords
  /** Usage samples, errors, the owner's controls. */
  readonly owner: OwnerRecords
  /** Each conversation's messages and replies (the history tools' HistoryReader). */
  readonly history: HistoryRecords
  constructor(backend: Backend) {
    super(backend)
    this.cluster = new ClusterRecords(backend)
    this.schedules = new ScheduleRecords(backend)
    this.outbox = new OutboxRecords(backend)
    this.questions = new QuestionRecords(backend)
    this.users = new UserRecords(backend)
    this.owner = new OwnerRecords(backend)
    this.history = new HistoryRecords(backend)
  }

  /** Opens the Postgres database at `storeUrl` when one is given, else `DATA_DIR/steward.sqlite`,
   *  migrating older data in place; throws NewerDataError on data written by a newer Steward. */
  static async open(dataDir: string, storeUrl?: string, postgres: PostgresOptions = {}): Promise<Store> {
    // Postgres migrates under its schema lock, as other processes may start at the same time.
    // Postgres's driver is loaded only for a store on Postgres: it costs every other start time.
    if (storeUrl) return new Store(await (await import("./postgres.ts")).PostgresBackend.open(storeUrl, c.SCHEMA, (backend) => migrate(backend), postgres))
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
    return this.readAll(c.tasks)
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
  taskByOrigin(origin: string): Promise<TaskRecord | undefined> {
    return this.first(c.tasks, "origin", origin)
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
    return this.readAll(c.conversations)
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

  // ── dedupe, health, channel state, backup ──────────────────────────────────

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

  /** A consistent copy of the whole store in a new file, taken while Steward runs. */
  backup(file: string): Promise<void> {
    return this.backend.backup(file)
  }

  // ── plumbing ───────────────────────────────────────────────────────────────

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
