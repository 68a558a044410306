import type { Logger } from "pino"
import type { Button, InboundMessage } from "../core/types.ts"
import type { InboxEvent, QuestionRecord } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import type { Store } from "../store/store.ts"
import type { Outbox } from "../channel/outbox.ts"

export interface Question {
  question: string
  options?: string[]
  default?: string
  /** Seconds until the default (or "no answer") is used. */
  timeout: number
}

export interface Answer {
  answer: string
  source: "user" | "default" | "timeout"
}

/** Where a question is asked, and the call that asks it (its idempotency key). */
export interface Asker {
  conversation: string
  user: string
  origin: string
}

/** Typed to a question: answer it with its default (or no answer). */
export const SKIP = "/skip"

/** setTimeout's longest delay; a later deadline is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1

/**
 * Questions to users: at most one open per conversation, each with a deadline that survives
 * restarts. Closing a question — answered, expired or replaced — is one write holding the new
 * state, the edit of its message and (for ask_user) the event that wakes the Teller, so a crash
 * can never answer a question without waking anyone, or wake twice.
 */
export class Questions {
  private records = new Map<string, QuestionRecord>()
  /** Questions whose options the user was reminded of: the next text that is no option is taken as is. */
  private hinted = new Set<string>()
  private byOrigin = new Map<string, QuestionRecord>()
  private timers = new Map<string, NodeJS.Timeout>()
  /** Runs that wait in memory for a permission question. */
  private waiters = new Map<string, (answer: Answer) => void>()
  private stopped = false

  constructor(
    private readonly store: Store,
    private readonly outbox: Outbox,
    private readonly log: Logger,
    /** Called with the event that resumes the Teller after an ask_user question closed. */
    private readonly wake: (event: InboxEvent) => void,
  ) {}

  /** Loads the questions; those whose deadline passed while Steward was down expire now,
   *  exactly as their timer would have expired them. */
  async load(): Promise<void> {
    for (const record of await this.store.questions.open()) this.track(record)
    for (const record of this.records.values()) if (record.status === "open") this.arm(record)
  }

  stop(): void {
    this.stopped = true
    for (const timer of this.timers.values()) clearTimeout(timer)
  }

  /** The newest open question of a conversation (of one purpose, if given). */
  openIn(conversation: string, purpose?: QuestionRecord["purpose"]): QuestionRecord | undefined {
    let newest: QuestionRecord | undefined
    for (const record of this.records.values()) {
      if (record.conversation === conversation && record.status === "open" && (!purpose || record.purpose === purpose)) newest = record
    }
    return newest
  }

  /**
   * Asks once per asker: a replayed call gets the answer if there is one by now, or undefined
   * while the question is open. A new question replaces the conversation's open one.
   */
  async ask(asker: Asker, question: Question, purpose: QuestionRecord["purpose"]): Promise<Answer | undefined> {
    const known = this.byOrigin.get(asker.origin) ?? (await this.store.questions.byOrigin(asker.origin))
    if (known) return known.status === "open" ? undefined : { answer: known.answer ?? "", source: known.source ?? "timeout" }
    // One open ask_user question per conversation. A permission question may open beside it
    // (a task needs approval while the Teller waits); typed text goes to the newest.
    const older = purpose === "ask_user" ? this.openIn(asker.conversation, "ask_user") : undefined
    // The older call still gets an answer (its fallback), so the run that waits on it goes on.
    if (older) await this.resolve(older, fallback(older), { superseded: true })
    const id = newId()
    const message = this.outbox.prepare(asker.conversation, { text: questionText(question), buttons: buttonsOf(id, question.options) }, `question:${id}`)
    const record: QuestionRecord = {
      id,
      origin: asker.origin,
      conversation: asker.conversation,
      user: asker.user,
      question: question.question,
      options: question.options,
      default: question.default,
      deadline: new Date(Date.now() + question.timeout * 1000).toISOString(),
      purpose,
      status: "open",
      messageId: message.id,
      createdAt: new Date().toISOString(),
    }
    await this.store.save({ questions: [record], outbox: [message], history: [{ id: message.id, conversation: asker.conversation, role: "assistant", text: message.text }] })
    this.track(record)
    this.outbox.commit(message)
    this.arm(record)
    return undefined
  }

  /** For a run that cannot end while it waits (a permission asked by a task): resolves with the
   *  answer, or rejects when the run is aborted — which also closes the question. */
  async waitFor(asker: Asker, question: Question, signal: AbortSignal): Promise<Answer> {
    const ready = await this.ask(asker, question, "permission")
    if (ready) return ready
    const record = this.byOrigin.get(asker.origin)!
    return new Promise<Answer>((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(record.id)
        void this.close(this.records.get(record.id)!, "(no longer needed)").finally(() => reject(signal.reason))
      }
      signal.addEventListener("abort", onAbort, { once: true })
      this.waiters.set(record.id, (answer) => {
        signal.removeEventListener("abort", onAbort)
        resolve(answer)
      })
    })
  }

  /**
   * Offers a user's message to the conversation's open question. "answered": it was the
   * answer; "hint": it was not one of the options, and the user was told which are;
   * "not_yours": a button of a question asked of another user (nothing happens); undefined:
   * there is no open question for it (a stale button press included), so it is an ordinary message.
   */
  async take(message: InboundMessage): Promise<"answered" | "hint" | "stale" | "not_yours" | undefined> {
    if (message.action !== undefined) {
      const [id, index] = message.action.split(":")
      const record = this.records.get(id ?? "")
      const option = record?.status === "open" && record.conversation === message.conversation ? record.options?.[Number(index)] : undefined
      if (!record || option === undefined) return "stale"
      // In a shared thread, a question is answered by the user it was asked of, and no one else.
      if (record.user !== message.user) return "not_yours"
      await this.resolve(record, { answer: option, source: "user" }, { typed: message.text })
      return "answered"
    }
    const record = this.openIn(message.conversation)
    // Someone else writing in the thread is not answering: an ordinary message.
    if (!record || record.user !== message.user) return undefined
    // The user is never trapped by a question: /skip takes its default (or no answer), and text
    // that is no option is their own answer once they have been shown the options again.
    if (message.text.trim().toLowerCase() === SKIP) {
      await this.resolve(record, fallback(record), { typed: message.text })
      return "answered"
    }
    const answer = matchOption(record, message.text) ?? (this.hinted.has(record.id) ? message.text.trim() : undefined)
    if (answer === undefined) {
      this.hinted.add(record.id)
      const hint = `Please answer with one of: ${record.options!.map((option, i) => `${i + 1}. ${option}`).join(" · ")}`
      await this.outbox.add(message.conversation, hint, `hint:${message.eventId ?? newId()}`, { history: [{ id: newId(), conversation: message.conversation, role: "user", text: message.text }] })
      return "hint"
    }
    await this.resolve(record, { answer, source: "user" }, { typed: message.text })
    return "answered"
  }

  /** Closes a conversation's open ask_user question without an answer: a fresh Teller session
   *  was started, and the old one's call will never be resumed. */
  async dismiss(conversation: string): Promise<void> {
    const record = this.openIn(conversation, "ask_user")
    if (record) await this.close(record, "(no longer needed)")
  }

  /** Only open questions are kept in memory; a closed one is read from the store when its
   *  call is replayed (ask), and a press of its button finds nothing open (stale). */
  private track(record: QuestionRecord): void {
    if (record.status === "open") {
      this.records.set(record.id, record)
      this.byOrigin.set(record.origin, record)
    } else {
      this.records.delete(record.id)
      this.byOrigin.delete(record.origin)
    }
  }

  private arm(record: QuestionRecord): void {
    if (this.stopped) return
    const left = Date.parse(record.deadline) - Date.now()
    const timer = setTimeout(() => {
      this.timers.delete(record.id)
      const current = this.records.get(record.id)
      if (current?.status !== "open") return
      if (Date.parse(current.deadline) > Date.now()) return this.arm(current)
      this.resolve(current, fallback(current)).catch((error) => this.log.error({ err: error, question: current.id }, "could not expire a question"))
    }, Math.max(0, Math.min(left, MAX_DELAY_MS)))
    timer.unref()
    this.timers.set(record.id, timer)
  }

  /** Closes a question with its answer and resumes whoever waits for it. */
  private async resolve(record: QuestionRecord, answer: Answer, { typed, superseded = false }: { typed?: string; superseded?: boolean } = {}): Promise<void> {
    const status = superseded ? "superseded" : answer.source === "user" ? "answered" : "expired"
    const note = superseded ? "(replaced by a newer question)" : outcomeText(answer)
    const closed: QuestionRecord = { ...record, status, ...answer, closedAt: new Date().toISOString() }
    this.hinted.delete(record.id)
    const edit = this.outbox.prepare(record.conversation, { text: closedText(record.question, note) }, `question-closed:${record.id}`, record.messageId)
    // ask_user resumes the Teller; a permission question resumes the run waiting in memory
    // (or, after a restart, the task's next run finds the answer when it asks again).
    const event: InboxEvent | undefined =
      record.purpose === "ask_user" ? { id: newId(), conversation: record.conversation, user: record.user, kind: "answer", text: answer.answer, createdAt: new Date().toISOString(), attempts: 0 } : undefined
    const typedLine = typed !== undefined ? [{ id: newId(), conversation: record.conversation, role: "user" as const, text: typed }] : []
    await this.store.save({ questions: [closed], outbox: [edit], events: event ? [event] : [], history: typedLine })
    this.finishClose(closed, edit)
    if (event) this.wake(event)
    this.waiters.get(record.id)?.(answer)
    this.waiters.delete(record.id)
  }

  /** Closes a question nobody waits for any more (its run was aborted, its session replaced). */
  private async close(record: QuestionRecord, note: string): Promise<void> {
    const closed: QuestionRecord = { ...record, status: "closed", closedAt: new Date().toISOString() }
    const edit = this.outbox.prepare(record.conversation, { text: closedText(record.question, note) }, `question-closed:${record.id}`, record.messageId)
    await this.store.save({ questions: [closed], outbox: [edit] })
    this.finishClose(closed, edit)
  }

  private finishClose(closed: QuestionRecord, edit: ReturnType<Outbox["prepare"]>): void {
    this.track(closed)
    clearTimeout(this.timers.get(closed.id))
    this.timers.delete(closed.id)
    this.outbox.commit(edit)
    this.log.info({ question: closed.id, status: closed.status, source: closed.source }, "question closed")
  }
}

/** The answer when the user gives none: the default, or an empty "timeout" answer. */
function fallback(record: QuestionRecord): Answer {
  return record.default !== undefined ? { answer: record.default, source: "default" } : { answer: "", source: "timeout" }
}

function buttonsOf(questionId: string, options: string[] | undefined): Button[] | undefined {
  return options?.map((label, i) => ({ id: `${questionId}:${i}`, label }))
}

function questionText(question: Question): string {
  const fallback = question.default !== undefined ? `_If there is no answer in ${duration(question.timeout)}, I will go with “${question.default}”._` : undefined
  return fallback ? `${question.question}\n\n${fallback}` : question.question
}

/** Longer questions are cut in their closed message, so the outcome after them is never what a
 *  platform's length limit cuts off (a split question's buttons are on its last part). */
const CLOSED_QUESTION_CHARS = 1000

function closedText(question: string, note: string): string {
  const shown = question.length > CLOSED_QUESTION_CHARS ? `${question.slice(0, CLOSED_QUESTION_CHARS).trimEnd()}…` : question
  return `${shown}\n\n${note}`
}

function outcomeText(answer: Answer): string {
  if (answer.source === "user") return `Answer: ${answer.answer}`
  return answer.source === "default" ? `No answer — used default: ${answer.answer}` : "No answer"
}

/** Typed text answers a question when it equals an option (any case) or its number; any text
 *  answers a question without options. */
function matchOption(record: QuestionRecord, text: string): string | undefined {
  if (!record.options) return text
  const typed = text.trim().toLowerCase()
  const byNumber = /^\d+$/.test(typed) ? record.options[Number(typed) - 1] : undefined
  return byNumber ?? record.options.find((option) => option.toLowerCase() === typed)
}

function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`
  if (seconds % 60 === 0) return `${seconds / 60} min`
  return `${seconds} s`
}
