/**
 * The types more than one part of Steward speaks: roles, ids, tasks and triggers, and the
 * messages of the channel contract. This module imports nothing, so any module may import it
 * without forming a cycle (`npm run depcheck` keeps it that way).
 */

/** The three agent roles of Steward. Each runs the same agent loop with its own prompt and tools. */
export type Role = "teller" | "planner" | "worker"

/** What the core reports as it happens, for metrics: each a counter's increment. */
export interface WorkObserver {
  /** A Teller turn ended: it answered, or failed and the user got the apology. */
  turnEnded(outcome: "completed" | "failed"): void
  /** A platform event delivered again, and ignored. */
  duplicateIgnored(): void
  /** A trigger firing reached this status (fired or skipped when due; ran, delivered or failed later). */
  firingReached(status: "fired" | "ran" | "delivered" | "failed" | "skipped"): void
}

/** `<channel>:…`, e.g. `telegram:1001`, `slack:T1:D1:1700000000.000100`. */
export type ConversationId = string

/** `<channel>:<user-id>`, e.g. `telegram:1001`, `slack:U1001`. */
export type UserId = string

// ── the channel contract's messages ─────────────────────────────────────────────

/** A chat message or a button press, as an adapter hands it to the core. */
export interface InboundMessage {
  conversation: ConversationId
  user: UserId
  /** What the user typed; for a button press, the button's label. */
  text: string
  /** The platform's id of this update or event (`telegram:<update_id>`, `slack:<event_id>`).
   *  The core remembers it durably: the same id delivered again is ignored. */
  eventId?: string
  /** A button press: the `id` of the pressed button as the core gave it in `OutgoingMessage`. */
  action?: string
  /** The user's IANA time zone, when the platform knows it (Slack's `users.info` → `user.tz`). */
  timezone?: string
  /** Files that came with the message (`text` is then its caption, possibly ""). The core
   *  decides whether and where to save them; the adapter only knows how to fetch them. */
  attachments?: InboundAttachment[]
  /** The user passed on someone else's message (a Telegram forward): `text` was written by
   *  this origin (a name, a chat, "a hidden user"), not by the user, and is outside content. */
  forwardedFrom?: string
}

/** A file a user sent, as an adapter describes it before anything is downloaded. */
export interface InboundAttachment {
  /** The file name as sent; undefined when the platform has none (a Telegram photo or voice note). */
  name?: string
  /** photo: a picture the platform compressed; voice: a recorded voice note; video_note: a round video. */
  kind: "photo" | "document" | "voice" | "audio" | "video" | "video_note"
  /** The MIME type the platform reports, if any. */
  mimeType?: string
  /** Bytes, when the platform says before the download. */
  size?: number
  /** Fetches the file; rejects when it is larger than `maxBytes` (whatever size was announced). */
  download(maxBytes: number): Promise<Uint8Array>
}

/** An image saved in the workspace that a user message shows the model (VISION). */
export interface ImageRef {
  /** Absolute path of the saved file: sessions keep this reference, never the bytes. */
  path: string
  mediaType: string
}

/** A button under a message. `id` is short (≤ 64 bytes) and resolved by the core. */
export interface Button {
  id: string
  label: string
}

/** What the core asks a channel to post: Markdown text, optionally with buttons, or a file
 *  with `text` as its caption. */
export interface OutgoingMessage {
  text: string
  buttons?: Button[]
  file?: OutgoingFile
  /** Send `text` as it is, without formatting: its formatted form could not be sent. */
  plain?: boolean
  /** The core's id for this message (its outbox record): a channel that can tag what it posts
   *  with it finds a send of unknown outcome again after a restart (`Channel.findSent`). */
  ref?: string
  /** A text file to send after `text` (a reply too long for messages, in full). */
  attachment?: TextAttachment
  /** The answer this message completes, shown while it was written (`Channel.live`): the
   *  adapter finishes what it shows into this message instead of leaving a second copy. */
  live?: string
}

/** A text document sent as a file. */
export interface TextAttachment {
  name: string
  text: string
}

/** What the core answers an adapter about a message it took: a short note for the sender alone
 *  (a button of a question asked of someone else), which the platform shows only to them. */
export interface InboundOutcome {
  notice?: string
  /** The message waits behind a Teller turn under way: the adapter shows it was seen (a reaction). */
  queued?: boolean
}

/** A file on this machine to post into the chat. */
export interface OutgoingFile {
  /** Absolute path; the adapter reads it when sending (and again on a retry). */
  path: string
  /** The name the chat shows. */
  name: string
  /** Telegram posts an image as a photo, anything else as a document. */
  mimeType: string
}

/** One tool call of a running task, as a channel may show it (OpenCode's metadata summary). */
export interface ToolSummary {
  id: string
  tool: string
  status: "running" | "completed" | "error"
  title?: string
}

/** What a batch of delegated work (a task and the tasks it committed) is doing, for one status
 *  message the adapter may edit in place; `taskId` is the batch head's. */
export interface ProgressUpdate {
  taskId: string
  agent: string
  state: "running" | "done"
  tools: ToolSummary[]
  /** What the work is about, a few words (the task's prompt, shortened). */
  title?: string
  /** When the work started (ISO 8601): the status shows the time since. */
  startedAt?: string
  /** While running: the button that stops the work (the core resolves its id). */
  stop?: Button
  /** With state "done": how the work ended. */
  outcome?: "done" | "stopped" | "failed"
}

/** A command a user may type (`/tasks`), for platforms that list them (Telegram's menu). */
export interface CommandInfo {
  name: string
  description: string
  /** Only owners may run it, so a platform's menu shows it to them alone. */
  ownerOnly?: boolean
}

// ── tasks ────────────────────────────────────────────────────────────────────────

export type TaskStatus = "queued" | "running" | "completed" | "failed" | "cancelled" | "timed_out"

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled", "timed_out"])

/** One delegated unit of work. A task moves by rewriting this one record, never by moving it. */
export interface TaskRecord {
  id: string
  role: Exclude<Role, "teller">
  /** "planner", or the worker type. */
  agent: string
  type: "oneshot" | "conditional"
  condition?: unknown
  prompt: string
  priority: number
  /** Seconds; null → the role's default. */
  timeout: number | null
  status: TaskStatus
  conversation: ConversationId
  user: UserId
  /** Session of the caller; the task's own session is its child. */
  parentSessionId: string
  sessionId: string
  /** The task continues an earlier task's session (delegate's session_id). */
  continuesSession?: boolean
  /** The Planner task whose run committed this worker task. */
  parentTaskId?: string
  /** `${sessionId}:${toolCallId}` of the delegate call that created it: a call replayed after
   *  a crash finds its task instead of creating a second one. */
  origin: string
  /** Runs started. A task found running at start-up was interrupted by a crash. */
  attempts: number
  /** Runs started, counting those a stop cut short (which `attempts` gives back): names a run's
   *  job and claim in a cluster. Absent: `attempts`. */
  runs?: number
  createdAt: string
  startedAt?: string
  endedAt?: string
  result?: string
  error?: string
  /** Planner only: worker tasks staged by its delegate calls, committed only if it succeeds. */
  staged?: TaskRecord[]
  /** Planner only: the worker tasks it committed. */
  children?: string[]
  /** The trigger firing whose run this is. */
  firingId?: string
  /** The command that started it directly (`/review`, `@researcher`), without a model deciding. */
  command?: string
  /** Batch head (a task nobody committed): the Teller has been woken with the batch's results. */
  reported?: boolean
  /** The run of a quiet trigger: a result of exactly NO_REPORT wakes nobody. */
  quiet?: boolean
}

// ── triggers ─────────────────────────────────────────────────────────────────────

/**
 * When a conditional task or trigger may run: another task's outcome, a point in time, a named
 * event, and all/any of those. Its schema and evaluation live in `src/schedule/condition.ts`.
 */
export type Condition =
  | { kind: "task"; taskId: string; status?: "completed" | "failed" | "any" }
  | { kind: "time"; at: string }
  | { kind: "event"; name: string }
  | { kind: "all" | "any"; of: Condition[] }

/** A schedule created by the `schedule` tool. It moves by rewriting this one record, like a task. */
export interface TriggerRecord {
  id: string
  /** Where it was created; reports go here unless `target` says otherwise. */
  conversation: ConversationId
  user: UserId
  kind: "recurring" | "scheduled" | "conditional"
  prompt: string
  /** recurring: seconds between due times, counted from creation. */
  interval?: number
  /** recurring, instead of interval. */
  cron?: string
  /** With cron: the IANA zone it is read in (the schedule tool fills in the user's zone). */
  timezone?: string
  /** scheduled. */
  runAt?: string
  /** conditional. */
  condition?: Condition
  /** conditional: events count from here (creation, then just after each firing). */
  since?: string
  /** conditional: seconds after a firing before the condition is listened to again. */
  cooldown: number
  /** conditional: the end of the current cooldown. */
  cooldownUntil?: string
  /** Seconds each run may take; null: the Worker default. */
  timeout: number | null
  onMissed: "run-once" | "skip"
  /** Seconds a missed due time may be late and still run (onMissed "run-once"). */
  maxLateness: number
  /** A conversation to report to instead of the creating one (validated by the host). */
  target?: ConversationId
  /** A run whose result is exactly NO_REPORT posts nothing ("ran, nothing to report"). */
  quiet?: boolean
  /** paused: no timers and no condition watch until resumed (which does not catch up). */
  status: "active" | "paused" | "ended" | "cancelled"
  /** Why it ended, when not by firing its last run. */
  endReason?: string
  /** recurring and scheduled: the due time the engine waits for. A due time found in the past
   *  at start-up was missed while Steward was down. */
  nextRunAt?: string
  lastFiredAt?: string
  /** The latest firing's outcome, or its run's progress once it fired. */
  lastOutcome?: string
  lastFiringId?: string
  /** The firing whose run has not ended yet: while set, a due time is skipped (overlap). */
  runningFiringId?: string
  /** That run's task, once the host has created it. */
  runningTaskId?: string
  createdAt: string
  /** `${sessionId}:${callId}` of the schedule call: a replayed call finds its trigger. */
  origin: string
}

/** One due time of a trigger and what became of it: fired → ran → delivered, or failed; a due
 *  time that did not run is a record too ("skipped"). */
export interface FiringRecord {
  /** `<triggerId>/<ulid>`: a trigger's firings sort together. */
  id: string
  triggerId: string
  /** The due time (recurring, scheduled) or the moment the condition held (conditional). */
  scheduledFor: string
  /** When it was recorded. */
  at: string
  outcome: "fired" | "skipped_overlap" | "missed_run" | "missed_skipped"
  /** Earlier due times that passed without a run, from this one up to scheduledFor (exclusive). */
  missedFrom?: string
  taskId?: string
  status: "fired" | "ran" | "delivered" | "failed" | "skipped"
  /** The platform's id of the report. */
  messageId?: string
  /** A quiet trigger's run answered NO_REPORT: it ran and nothing was posted. */
  nothingToReport?: boolean
  error?: string
}

// ── conversation history ─────────────────────────────────────────────────────────

/** One message of a conversation's history, as the history tools return it. */
export interface HistoryMessage {
  role: "user" | "assistant"
  text: string
  createdAt: string
}

/** Reads a conversation's history; the store's history records implement it (src/store/history-records.ts), the history tools use it. */
export interface HistoryReader {
  /** `count` messages ending `offset` messages before the newest, oldest first. */
  recent(conversation: ConversationId, count: number, offset: number): Promise<HistoryMessage[]>
  /** Messages with after <= createdAt <= before, oldest first. */
  between(conversation: ConversationId, after: Date, before: Date): Promise<HistoryMessage[]>
}
