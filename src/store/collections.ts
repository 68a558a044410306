import { decodeTime } from "ulid"
import type { FiringRecord, RaisedRecord, TriggerRecord } from "../schedule/records.ts"
import type { IndexEntry, WriteOp } from "./backend.ts"
import { isBatchHead, TERMINAL, type ConversationRecord, type InboxEvent, type MessageRecord, type OutboxRecord, type PairingRecord, type QuestionRecord, type SessionRecord, type TaskRecord } from "./records.ts"

/**
 * The Store's named collections: how a record of each is identified and which index entries it
 * has. Every time-ordered read goes through one of these indexes (see backend.ts).
 */
export interface Collection<T> {
  name: string
  id(record: T): string
  indexes(record: T): Record<string, IndexEntry | undefined>
}

/** A user message or a reply, kept per conversation for the history tools. */
export interface HistoryLine {
  id: string
  conversation: string
  role: "user" | "assistant"
  text: string
}

/** A platform event id taken (dedupe), kept for SEEN_RETENTION_MS. */
export interface SeenRecord {
  id: string
  at: string
}

/** Per stream of sequential event ids (Telegram's update_id): the highest id pruned, so an
 *  update older than the retention window is still recognised. */
export interface SeenMark {
  stream: string
  mark: number
}

export interface AllowedRecord {
  user: string
  at: string
}

export interface ChannelEntry {
  channel: string
  key: string
  value: unknown
}

/** The latest time an event of this name was raised: what start-up needs of all raised events. */
export interface RaisedName {
  name: string
  at: string
  /** The id of that raising (a ULID of its creation). */
  id: string
}

export interface SchemaRecord {
  version: number
}

export const put = <T>(collection: Collection<T>, record: T): WriteOp => ({ collection: collection.name, id: collection.id(record), value: record, indexes: collection.indexes(record) })
export const remove = <T>(collection: Collection<T>, id: string): WriteOp => ({ collection: collection.name, id, delete: true })

const ALL = ""
const at = (iso: string): number => Date.parse(iso)
const only = (when: boolean, entry: IndexEntry): IndexEntry | undefined => (when ? entry : undefined)
function define<T>(name: string, id: (record: T) => string, indexes: (record: T) => Record<string, IndexEntry | undefined> = () => ({})): Collection<T> {
  return { name, id, indexes }
}

/** A task is loaded at start-up while it still needs the Supervisor: not ended, or a batch head
 *  whose report has not woken the Teller yet. */
export const isLiveTask = (task: TaskRecord): boolean => !TERMINAL.has(task.status) || (isBatchHead(task) && !task.reported)

export const tasks = define<TaskRecord>(
  "tasks",
  (task) => task.id,
  (task) => ({
    live: only(isLiveTask(task), { group: ALL, at: at(task.createdAt) }),
    finished: only(TERMINAL.has(task.status), { group: task.conversation, at: at(task.endedAt ?? task.createdAt) }),
    origin: { group: task.origin, at: 0 },
  }),
)
export const sessions = define<SessionRecord>("sessions", (session) => session.id)
export const messages = define<MessageRecord>(
  "messages",
  (message) => message.id,
  (message) => ({ session: { group: message.sessionId, at: decodeTime(message.id) } }),
)
export const events = define<InboxEvent>(
  "events",
  (event) => event.id,
  (event) => ({ all: { group: ALL, at: at(event.createdAt) } }),
)
export const conversations = define<ConversationRecord>("conversations", (conversation) => conversation.id)
export const outbox = define<OutboxRecord>(
  "outbox",
  (record) => record.id,
  (record) => ({
    unsent: only(record.status === "pending", { group: ALL, at: at(record.createdAt) }),
    origin: { group: record.origin, at: 0 },
    firing: only(record.firingId !== undefined, { group: record.firingId ?? "", at: at(record.createdAt) }),
  }),
)
export const history = define<HistoryLine>(
  "history",
  (line) => line.id,
  (line) => ({ conversation: { group: line.conversation, at: decodeTime(line.id) } }),
)
export const questions = define<QuestionRecord>(
  "questions",
  (question) => question.id,
  (question) => ({ open: only(question.status === "open", { group: ALL, at: at(question.createdAt) }), origin: { group: question.origin, at: 0 } }),
)
export const seen = define<SeenRecord>(
  "seen",
  (record) => record.id,
  (record) => ({ time: { group: ALL, at: at(record.at) } }),
)
export const seenMarks = define<SeenMark>("seen_marks", (mark) => mark.stream)
export const pairings = define<PairingRecord>("pairings", (pairing) => pairing.code)
export const allowed = define<AllowedRecord>("allowed", (record) => record.user)
export const channelEntries = define<ChannelEntry>(
  "channel_state",
  (entry) => `${entry.channel}\u0000${entry.key}`,
  // Listed in key order: equal `at`, so the id (channel, then key) orders them.
  (entry) => ({ channel: { group: entry.channel, at: 0 } }),
)
export const triggers = define<TriggerRecord>(
  "triggers",
  (trigger) => trigger.id,
  (trigger) => ({
    // A trigger that ended while its last run goes on still needs the engine for that run.
    live: only(trigger.status === "active" || trigger.runningFiringId !== undefined, { group: ALL, at: at(trigger.createdAt) }),
    origin: { group: trigger.origin, at: 0 },
  }),
)
export const firings = define<FiringRecord>(
  "firings",
  (firing) => firing.id,
  (firing) => ({ trigger: { group: firing.triggerId, at: at(firing.at) } }),
)
export const raised = define<RaisedRecord>(
  "raised",
  (record) => record.id,
  (record) => ({ time: { group: ALL, at: decodeTime(record.id) } }),
)
export const raisedNames = define<RaisedName>("raised_names", (record) => record.name)
export const meta = define<SchemaRecord & { id: string }>("meta", (record) => record.id)
