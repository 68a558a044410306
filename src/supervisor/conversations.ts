import type { Logger } from "pino"
import type { Agent } from "../agent/agents.ts"
import { textOf, toolCalls, type LoopInput, type LoopOutcome } from "../agent/loop.ts"
import type { Outbox } from "../channel/outbox.ts"
import type { ConversationId, ImageRef, OutgoingFile, UserId, WorkObserver } from "../core/types.ts"
import type { Questions } from "../question/questions.ts"
import type { InboxEvent, MessageRecord, SessionRecord } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import type { Store } from "../store/store.ts"
import { apology, incident } from "../core/errors.ts"
import type { Caller, ReplyCapability } from "../tool/capabilities.ts"
import { readableReport } from "./report.ts"
import { LiveAnswers, type TakenAnswer } from "../stream/live-answers.ts"
import { STEP_TEXT } from "../agent/stream-step.ts"
import type { LiveText } from "../channel/channel.ts"
import type { Session, Sessions } from "./sessions.ts"
import { firstOf, nextAuthor, putBack, takeOwn } from "./turn-author.ts"
import { QuotaReached } from "./runner.ts"

/** Why a turn was aborted by the user's /stop: it ends without an apology or a relayed report. */
class StoppedByUser extends Error {}

/** A Teller turn interrupted this many times (crashes while it ran) is given up with an apology. */
const MAX_TURN_ATTEMPTS = 3

export interface ConversationsDeps {
  store: Store
  observer?: WorkObserver
  outbox: Outbox
  questions: Questions
  sessions: Sessions
  log: Logger
  /** Runs the Teller over a conversation's session. */
  runTeller: (session: Session, signal: AbortSignal, where: { conversation: ConversationId; user: UserId }, takeInput: LoopInput["takeInput"], hooks: TurnHooks) => Promise<LoopOutcome>
  /** A turn started or ended. */
  changed: () => void
  /** Steward is stopping: no new turn starts, and a turn cut short stays pending. */
  stopping: () => boolean
  /** How the conversation's channel shows an answer to `user` while it is written, if it can
   *  and replies stream (STREAM_REPLIES). */
  liveText?: (conversation: ConversationId, user: UserId) => ((id: string) => LiveText) | undefined
}

/** What a Teller run hands back while it runs. */
export interface TurnHooks {
  onAnswer: NonNullable<LoopInput["onAnswer"]>
  /** Where its answers are shown as they are written, when the channel can and streaming is on. */
  answers?: LiveAnswers
}

interface Conversation {
  id: ConversationId
  user: UserId
  /** Events not yet handled, in arrival order. */
  events: InboxEvent[]
  busy: boolean
  /** Read from the store once, then kept. */
  tellerSessionId?: string
}

/**
 * The conversations: each one's inbox of events (user messages, task results, answers) and
 * the Teller turns that handle them — one turn at a time per conversation, each acting for one
 * author (turn-author.ts); an event of that author that arrives mid-turn is handed to the
 * running turn at its next step, another person's waits for a turn of their own.
 */
export class Conversations implements ReplyCapability {
  private conversations = new Map<ConversationId, Conversation>()
  /** Per conversation, the trigger firings whose reports the running Teller turn is handling. */
  private turnFirings = new Map<ConversationId, Set<string>>()
  /** Per conversation, the answers the running Teller turn shows as they are written. */
  private turnAnswers = new Map<ConversationId, LiveAnswers>()
  /** Per conversation, the running turn and whom it acts for. */
  private turns = new Map<ConversationId, { controller: AbortController; user: UserId }>()
  /** Turns under way, so stop() can wait for them. */
  private inflight = new Set<Promise<unknown>>()
  /** Ids of the events queued or being handled: an event is taken once, however often it is
   *  woken (a batch's results by recovery and by the normal path). */
  private queued = new Set<string>()

  constructor(private readonly deps: ConversationsDeps) {}

  /** Takes the events left pending by a stop or crash (see recovery.ts); `resume` runs them. */
  async load(): Promise<void> {
    // Ids are not all creation-ordered (a batch's results are named after the batch): arrival order is.
    const events = (await this.deps.store.events()).sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    for (const event of events) this.enqueue(event)
  }

  /** Starts the turns of every conversation with events waiting, or of one. */
  resume(only?: ConversationId): void {
    for (const conversation of this.conversations.values()) if (only === undefined || conversation.id === only) this.pump(conversation)
  }

  /** Aborts running turns and waits for them; their events stay pending and are replayed from
   *  the log at the next start. */
  async stop(): Promise<void> {
    for (const { controller } of this.turns.values()) controller.abort(new Error("Steward is stopping"))
    await Promise.allSettled(this.inflight)
  }

  /** A turn is running, or events wait for one — unless they wait for the user's answer. */
  get busy(): boolean {
    return [...this.conversations.values()].some((c) => c.busy || (c.events.length > 0 && !this.deps.questions.openIn(c.id, "ask_user")))
  }

  /** Conversations with a turn running now. */
  inTurn(): Set<ConversationId> {
    return new Set([...this.conversations.values()].filter((c) => c.busy).map((c) => c.id))
  }

  /** /stop: aborts the conversation's running Teller turn — only one acting for `user`, when
   *  given; false when there is none to stop. */
  stopTurn(conversation: ConversationId, user?: UserId): boolean {
    const turn = this.turns.get(conversation)
    if (!turn || (user !== undefined && turn.user !== user)) return false
    turn.controller.abort(new StoppedByUser("stopped by the user"))
    return true
  }

  /** Whom the conversation's running turn acts for, if one runs. */
  turnAuthor(conversation: ConversationId): UserId | undefined {
    return this.turns.get(conversation)?.user
  }

  /** Whose conversation this is, if Steward has one with that id. */
  async userOf(id: ConversationId): Promise<UserId | undefined> {
    return this.conversations.get(id)?.user ?? (await this.deps.store.conversation(id))?.user
  }

  /** Wakes the conversation's Teller with an event already on record. */
  enqueue(event: InboxEvent): void {
    if (this.queued.has(event.id)) return
    this.queued.add(event.id)
    const conversation = this.conversation(event.conversation, event.user)
    conversation.events.push(event)
    this.pump(conversation)
  }

  /** Conversations held in memory: those with a turn running or events waiting. */
  get size(): number {
    return this.conversations.size
  }

  /** Records a user message (with the platform event id that brought it, when given) and
   *  queues it. `typed` is what the user wrote (for the history); `text` what the Teller is given,
   *  with `images` (files the user sent) when its model sees images. */
  async userMessage(conversation: ConversationId, user: UserId, typed: string, text: string, platformEventId?: string, images?: ImageRef[]): Promise<void> {
    const event: InboxEvent = { id: newId(), conversation, user, kind: "user_message", text, createdAt: new Date().toISOString(), attempts: 0, ...(images?.length && { images }) }
    await this.deps.store.save({ events: [event], history: [{ id: event.id, conversation, role: "user", text: typed }], seen: platformEventId === undefined ? [] : [platformEventId] })
    this.enqueue(event)
  }

  /** /new: later turns use a fresh Teller session; an open question of the old one is closed
   *  (messages held behind it go to the new session once the conversation resumes). */
  async newTellerSession(conversation: ConversationId, user: UserId): Promise<void> {
    const session: SessionRecord = { id: newId(), role: "teller", agent: "teller", conversation, user, createdAt: new Date().toISOString() }
    await this.deps.questions.dismiss(conversation)
    await this.deps.store.save({ conversations: [{ id: conversation, user, tellerSessionId: session.id }], sessions: [session] })
    this.deps.sessions.adopt(session)
    this.conversation(conversation, user).tellerSessionId = session.id
  }

  /** The id of the conversation's Teller session, created on first use. */
  async tellerSessionId(conversation: ConversationId, user: UserId): Promise<string> {
    const held = this.conversations.get(conversation)
    return held?.tellerSessionId ?? (await this.sessionInfo(conversation, user)).id
  }

  /** The reply tool: a reply in a turn that handles a scheduled report is that report, so its
   *  delivery is recorded on the firing. */
  async reply(caller: Caller, text: string): Promise<void> {
    const live = this.turnAnswers.get(caller.conversation)?.take(caller.callId)
    const record = await this.deps.outbox.add(caller.conversation, { text, live: live?.id }, `${caller.sessionId}:${caller.callId}`, {}, this.firingOf(caller), caller.fresh)
    // A replayed call found its message sent before: what this run showed is not a second copy.
    if (live && record.live !== live.id) live.discard()
  }

  /** The send_file tool: the outbox record holds the file's path; the adapter reads it when sending. */
  async sendFile(caller: Caller, file: OutgoingFile, caption: string): Promise<void> {
    await this.deps.outbox.add(caller.conversation, { text: caption, file }, `${caller.sessionId}:${caller.callId}`, {}, this.firingOf(caller), caller.fresh)
  }

  private firingOf(caller: Caller): string | undefined {
    return caller.role === "teller" ? this.turnFirings.get(caller.conversation)?.values().next().value : undefined
  }

  private conversation(id: ConversationId, user: UserId): Conversation {
    let conversation = this.conversations.get(id)
    if (!conversation) {
      conversation = { id, user, events: [], busy: false }
      this.conversations.set(id, conversation)
    }
    return conversation
  }

  /** Turns of one conversation run one at a time, in arrival order. */
  private pump(conversation: Conversation): void {
    if (conversation.busy || conversation.events.length === 0 || this.deps.stopping()) return
    // The Teller is stopped at an ask_user call: it resumes with the answer, and whatever else
    // arrived meanwhile is handed to it in that turn.
    if (this.deps.questions.openIn(conversation.id, "ask_user")) return
    conversation.busy = true
    this.deps.changed()
    const run = this.turn(conversation)
      .catch((error) => this.deps.log.error({ err: error, conversation: conversation.id }, "turn failed unexpectedly"))
      .finally(() => {
        conversation.busy = false
        this.deps.changed()
        this.pump(conversation)
        // Nothing left to do: the conversation is read again from the store when it next has work.
        if (!conversation.busy && conversation.events.length === 0 && this.conversations.get(conversation.id) === conversation) this.conversations.delete(conversation.id)
      })
    this.inflight.add(run)
    void run.finally(() => this.inflight.delete(run))
  }

  private async turn(conversation: Conversation): Promise<void> {
    // A turn acts for one author: the other people's events wait for turns of their own.
    const first = firstOf(conversation.events, nextAuthor(conversation.events)!)!
    const attempt = { ...first, attempts: first.attempts + 1 }
    // Not awaited on its own: the store keeps write order, and the turn's first model call waits
    // for a later write (its input), so the attempt is on disk before anything is acted on.
    this.deps.store.save({ events: [attempt] }).catch((error) => this.deps.log.error({ err: error }, "could not record a turn attempt"))
    conversation.events[conversation.events.indexOf(first)] = attempt
    const session = await this.tellerSession(conversation)
    try {
      await this.handle(conversation, session, attempt, first)
    } finally {
      this.deps.sessions.release(session.info.id)
    }
  }

  private async handle(conversation: Conversation, session: Session, attempt: InboxEvent, first: InboxEvent): Promise<void> {
    if (attempt.attempts > MAX_TURN_ATTEMPTS) {
      conversation.events.splice(conversation.events.indexOf(attempt), 1)
      // Results are sent as they are; a message the user can send again.
      if (attempt.kind === "task_results") await this.relayResults(attempt)
      else await this.deps.outbox.add(conversation.id, "Sorry — I kept failing while handling your last message, so I stopped. Please send it again.", `giveup:${attempt.id}`)
      await this.done([attempt])
      return
    }
    const consumed: InboxEvent[] = []
    // Scheduled reports a crashed turn took already (in its log, not yet done): a reply replayed
    // from the log, which runs before this turn takes anything, is that report.
    const firings = new Set(conversation.events.flatMap((event) => (event.firingId && event.user === attempt.user && session.has(event.id) ? [event.firingId] : [])))
    this.turnFirings.set(conversation.id, firings)
    const takeInput = () => {
      const taken = takeOwn(conversation.events, attempt.user)
      consumed.push(...taken)
      for (const event of taken) if (event.firingId) firings.add(event.firingId)
      // An answer reaches the Teller as the result of its ask_user call, not as a message.
      return taken
        .filter((event) => event.kind !== "answer" && !session.has(event.id))
        .map((event) => ({ eventId: event.id, text: event.text, fromUser: event.kind === "user_message", images: event.images }))
    }
    const turnStart = session.records.length
    const controller = new AbortController()
    const liveText = this.deps.liveText?.(conversation.id, attempt.user)
    const answers = liveText && new LiveAnswers(liveText)
    if (answers) this.turnAnswers.set(conversation.id, answers)
    let outcome: LoopOutcome
    let failed = false
    let stopped = false
    try {
      this.turns.set(conversation.id, { controller, user: attempt.user })
      // The turn acts for the author of the events it takes — in a shared thread not
      // necessarily the conversation's first user: their memory, their tasks, their rights.
      const onAnswer = (text: string, recordId: string) => this.answer(conversation.id, text, recordId, firings, true, answers?.take(STEP_TEXT))
      outcome = await this.deps.runTeller(session, controller.signal, { conversation: conversation.id, user: attempt.user }, takeInput, { onAnswer, answers })
    } catch (error) {
      if (this.deps.stopping()) {
        // Left pending: the next start replays the turn from the log.
        putBack(conversation.events, consumed)
        return
      }
      stopped = controller.signal.reason instanceof StoppedByUser
      // The event that started the turn is answered (with the apology) even if the run failed
      // before taking it, so a failure that repeats does not replay it forever.
      if (!consumed.includes(attempt)) consumed.unshift(...conversation.events.splice(conversation.events.indexOf(attempt), 1))
      outcome = { status: "done", text: "" }
      failed = true
      // What failed stays in the log; the user gets a reference the owner can look up.
      if (error instanceof QuotaReached) await this.deps.outbox.add(conversation.id, error.message, `error:${consumed[0]?.id ?? first.id}`)
      else if (!stopped) {
        const ref = incident(this.deps.log, error, "Teller turn failed", { conversation: conversation.id, user: attempt.user })
        await this.deps.outbox.add(conversation.id, apology(ref), `error:${consumed[0]?.id ?? first.id}`)
      }
    } finally {
      this.turns.delete(conversation.id)
      this.turnFirings.delete(conversation.id)
      this.turnAnswers.delete(conversation.id)
      // Shown and never completed by a message (a failed or stopped turn): taken away.
      answers?.close()
    }
    const firingId = firings.values().next().value
    // Every answer in text is posted, whatever else the turn answered with reply — those of a
    // run before a crash too (the origin keeps each to one message).
    const texts = session.records.slice(this.turnFrom(session, turnStart, consumed)).filter(isTextAnswer)
    for (const record of texts) await this.answer(conversation.id, textOf(record.message), record.id, firings, false)
    let answered = texts.length > 0 || this.repliedSince(session, turnStart, consumed)
    if (outcome.status === "done" && outcome.text && !answered) {
      // A turn that ends in plain text without calling reply still answers the user.
      await this.deps.outbox.add(conversation.id, outcome.text, `final:${session.records.at(-1)!.id}`, {}, firingId)
      answered = true
    }
    // A turn that neither answered nor got anything done: every step a broken tool call, or
    // empty answers. It must not pass in silence.
    const silent = !answered && outcome.status === "done" && !session.records.slice(this.turnFrom(session, turnStart, consumed)).some((record) => isSuccessfulToolResult(record))
    // Task results are never dropped: when the turn failed or was silent, or posted nothing for
    // a scheduled run, the results themselves go out.
    for (const event of consumed) {
      if (event.kind !== "task_results" || stopped) continue
      const relayed = event.firingId ? await this.deps.outbox.hasFiring(event.firingId) : answered || (!failed && !silent)
      if (!relayed) await this.relayResults(event)
    }
    // A message the silent turn did not answer gets a short word on what went wrong.
    const unanswered = consumed.find((event) => event.kind !== "task_results")
    if (silent && !failed && unanswered) {
      await this.deps.outbox.add(conversation.id, `Sorry — I could not come up with an answer to that: ${whatWentWrong(session.records.slice(turnStart))}. Please try again or rephrase.`, `silent:${unanswered.id}`)
    }
    await this.done(consumed)
    this.deps.observer?.turnEnded(failed ? "failed" : "completed")
  }

  /** Posts an answer the Teller gave in text; a turn that handles a scheduled report posts it as that report. */
  private async answer(conversation: ConversationId, text: string, recordId: string, firings: Set<string>, fresh: boolean, live?: TakenAnswer): Promise<void> {
    const record = await this.deps.outbox.add(conversation, { text, live: live?.id }, `final:${recordId}`, {}, firings.values().next().value, fresh)
    if (live && record.live !== live.id) live.discard()
  }

  /** The events handled: off the log, and off the inbox. */
  private async done(events: InboxEvent[]): Promise<void> {
    await this.deps.store.save({ eventsDone: events.map((event) => event.id) })
    for (const event of events) this.queued.delete(event.id)
  }

  /** Sends a batch's results to the user as they are, for when the Teller did not relay them. */
  private async relayResults(event: InboxEvent): Promise<void> {
    const heading = event.firingId ? "Scheduled task report" : "Results of your tasks"
    await this.deps.outbox.add(event.conversation, `${heading}:\n\n${readableReport(event.text)}`, `report:${event.id}`, {}, event.firingId)
  }

  /** Did the Teller call reply during this turn (including before a crash that replayed it)? */
  private repliedSince(session: Session, turnStart: number, consumed: InboxEvent[]): boolean {
    // A reply call the tool refused (bad arguments) said nothing to the user.
    return session.records.slice(this.turnFrom(session, turnStart, consumed)).some((record) => isSuccessfulToolResult(record, "reply"))
  }

  /** Where this turn's records begin: at its first event's, when the turn is a replay after a
   *  crash (what it did before the crash counts), else where this run started. */
  private turnFrom(session: Session, turnStart: number, consumed: InboxEvent[]): number {
    const firstEvent = session.records.findIndex((record) => consumed.some((event) => event.id === record.eventId))
    return firstEvent >= 0 ? Math.min(firstEvent, turnStart) : turnStart
  }

  /** Opens the conversation's Teller session; the caller releases it. */
  private async tellerSession(conversation: Conversation): Promise<Session> {
    const info = conversation.tellerSessionId ? this.infoOf(conversation.id, conversation.user, conversation.tellerSessionId) : await this.sessionInfo(conversation.id, conversation.user)
    conversation.tellerSessionId = info.id
    return this.deps.sessions.open(info)
  }

  /** The conversation's Teller session as on record, or a new one written now. */
  private async sessionInfo(conversation: ConversationId, user: UserId): Promise<SessionRecord> {
    const record = await this.deps.store.conversation(conversation)
    if (record) return this.infoOf(conversation, user, record.tellerSessionId)
    const session = this.infoOf(conversation, user, newId())
    await this.deps.store.save({ conversations: [{ id: conversation, user, tellerSessionId: session.id }], sessions: [session] })
    this.deps.sessions.adopt(session)
    return session
  }

  private infoOf(conversation: ConversationId, user: UserId, id: string): SessionRecord {
    return { id, role: "teller", agent: "teller", conversation, user, createdAt: new Date().toISOString() }
  }
}

/** For the user, what kept the Teller from answering: the tool that failed last (its error
 *  text is the model's, and may carry internal detail), or its silence. */
function whatWentWrong(records: readonly MessageRecord[]): string {
  for (let i = records.length - 1; i >= 0; i--) {
    const message = records[i]!.message
    if (message.role !== "tool") continue
    const error = message.content.find((part) => part.type === "tool-result" && part.output.type === "error-text")
    if (error?.type === "tool-result") return `my tools kept failing (${error.toolName.slice(0, 80)})`
  }
  return "the model gave no answer"
}

/** A step of text alone: an answer to the user. */
function isTextAnswer(record: MessageRecord): boolean {
  const { message } = record
  return message.role === "assistant" && record.kind !== "summary" && toolCalls(message).length === 0 && textOf(message) !== ""
}

function isSuccessfulToolResult(record: MessageRecord, tool?: string): boolean {
  const { message } = record
  return message.role === "tool" && message.content.some((part) => part.type === "tool-result" && !part.output.type.startsWith("error") && (tool === undefined || part.toolName === tool))
}
