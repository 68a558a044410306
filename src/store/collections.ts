import { decodeTime } from "ulid"
import { TERMINAL, type FiringRecord, type TaskRecord, type TriggerRecord } from "../core/types.ts"
import type { RaisedRecord } from "../schedule/records.ts"
import type { CollectionSchema, IndexEntry, WriteOp } from "./backend.ts"
import { isBatchHead, type ConversationRecord, type InboxEvent, type MessageRecord, type OutboxRecord, type PairingRecord, type QuestionRecord, type SessionRecord, type ControlRecord, type ErrorRecord, type ClaimRecord, type ProcessRecord } from "./records.ts"
import type { UsageSample } from "../usage/usage.ts"

/**
 * The Store's named collections: how a record of each is identified and which index entries it
 * has. Every time-ordered read goes through one of these indexes (see backend.ts).
 */
export interface Collection<T> extends CollectionSchema {
  id(record: T): string
  entries(record: T): Record<string, IndexEntry | undefined>
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

/** What Steward keeps about a user besides their memory (src/user/profiles.ts). */
export interface ProfileRecord {
  user: string
  /** IANA zone; absent: DEFAULT_TIMEZONE. */
  timeZone?: string
  /** "user": set by the user, kept over what the platform reports. */
  timeZoneSource?: "user" | "platform"
  updatedAt: string
}

export interface SchemaRecord {
  version: number
}

export const put = <T>(collection: Collection<T>, record: T): WriteOp => ({ collection: collection.name, id: collection.id(record), value: record, indexes: collection.entries(record) })
export const remove = <T>(collection: Collection<T>, id: string): WriteOp => ({ collection: collection.name, id, delete: true })

const ALL = ""
const at = (iso: string): number => Date.parse(iso)

/** `indexes`: per index name, the record's entry in it (undefined: not listed there). */
function define<T>(name: string, id: (record: T) => string, indexes: Record<string, (record: T) => IndexEntry | undefined> = {}): Collection<T> {
  const named = Object.entries(indexes)
  return { name, id, indexes: named.map(([index]) => index), entries: (record) => Object.fromEntries(named.map(([index, entry]) => [index, entry(record)])) }
}

/** A task is loaded at start-up while it still needs the Supervisor: not ended, or a batch head
 *  whose report has not woken the Teller yet. */
export const isLiveTask = (task: TaskRecord): boolean => !TERMINAL.has(task.status) || (isBatchHead(task) && !task.reported)

export const tasks = define<TaskRecord>("tasks", (task) => task.id, {
  live: (task) => (isLiveTask(task) ? { group: ALL, at: at(task.createdAt) } : undefined),
  finished: (task) => (TERMINAL.has(task.status) ? { group: task.conversation, at: at(task.endedAt ?? task.createdAt) } : undefined),
  origin: (task) => ({ group: task.origin, at: 0 }),
})
export const sessions = define<SessionRecord>("sessions", (session) => session.id)
export const messages = define<MessageRecord>("messages", (message) => message.id, {
  session: (message) => ({ group: message.sessionId, at: decodeTime(message.id) }),
})
export const events = define<InboxEvent>("events", (event) => event.id, {
  all: (event) => ({ group: ALL, at: at(event.createdAt) }),
})
export const conversations = define<ConversationRecord>("conversations", (conversation) => conversation.id)
export const outbox = define<OutboxRecord>("outbox", (record) => record.id, {
  unsent: (record) => (record.status === "pending" ? { group: ALL, at: at(record.createdAt) } : undefined),
  origin: (record) => ({ group: record.origin, at: 0 }),
  firing: (record) => (record.firingId !== undefined ? { group: record.firingId, at: at(record.createdAt) } : undefined),
})
export const history = define<HistoryLine>("history", (line) => line.id, {
  conversation: (line) => ({ group: line.conversation, at: decodeTime(line.id) }),
})
export const questions = define<QuestionRecord>("questions", (question) => question.id, {
  open: (question) => (question.status === "open" ? { group: ALL, at: at(question.createdAt) } : undefined),
  origin: (question) => ({ group: question.origin, at: 0 }),
})
export const seen = define<SeenRecord>("seen", (record) => record.id, {
  time: (record) => ({ group: ALL, at: at(record.at) }),
})
export const seenMarks = define<SeenMark>("seen_marks", (mark) => mark.stream)
export const pairings = define<PairingRecord>("pairings", (pairing) => pairing.code)
export const allowed = define<AllowedRecord>("allowed", (record) => record.user)
export const channelEntries = define<ChannelEntry>("channel_state", (entry) => `${entry.channel}\u0000${entry.key}`, {
  // Listed in key order: equal `at`, so the id (channel, then key) orders them.
  channel: (entry) => ({ group: entry.channel, at: 0 }),
})
export const triggers = define<TriggerRecord>("triggers", (trigger) => trigger.id, {
  // A trigger that ended while its last run goes on still needs the engine for that run.
  live: (trigger) => (trigger.status === "active" || trigger.status === "paused" || trigger.runningFiringId !== undefined ? { group: ALL, at: at(trigger.createdAt) } : undefined),
  origin: (trigger) => ({ group: trigger.origin, at: 0 }),
})
export const firings = define<FiringRecord>("firings", (firing) => firing.id, {
  trigger: (firing) => ({ group: firing.triggerId, at: at(firing.at) }),
})
export const raised = define<RaisedRecord>("raised", (record) => record.id, {
  time: (record) => ({ group: ALL, at: decodeTime(record.id) }),
})
export const raisedNames = define<RaisedName>("raised_names", (record) => record.name)
/** A usage sample's id is given when it is recorded: the samples themselves have none. */
export const usage = define<UsageSample & { id: string }>("usage", (sample) => sample.id, {
  time: (sample) => ({ group: ALL, at: at(sample.at) }),
})
export const errors = define<ErrorRecord>("errors", (record) => record.id, {
  time: (record) => ({ group: ALL, at: at(record.at) }),
})
export const controls = define<ControlRecord>("controls", (record) => record.id, {
  pending: (record) => (record.status === "pending" ? { group: ALL, at: at(record.at) } : undefined),
})
export const profiles = define<ProfileRecord>("profiles", (profile) => profile.user)
export const claims = define<ClaimRecord>("claims", (claim) => claim.id, {
  ended: (claim) => (claim.endedAt ? { group: ALL, at: at(claim.endedAt) } : undefined),
})
export const processes = define<ProcessRecord>("processes", (record) => record.id)
export const meta = define<(SchemaRecord | { at: string }) & { id: string }>("meta", (record) => record.id)

/** Every collection, as a backend is opened with it. */
export const SCHEMA: readonly CollectionSchema[] = [
  tasks, sessions, messages, events, conversations, outbox, history, questions, seen, seenMarks, pairings, allowed, channelEntries, triggers, firings, raised, raisedNames, profiles, usage, errors, controls, claims, processes, meta,
].map(({ name, indexes }) => ({ name, indexes }))
