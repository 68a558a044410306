import type { Logger } from "pino"
import type { Access } from "../access/access.ts"
import type { Outbox } from "../channel/outbox.ts"
import { BUILT_IN, parseCommand, type FileCommand, type Parsed } from "../command/commands.ts"
import type { CommandInfo, ConversationId, InboundMessage, InboundOutcome, UserId, WorkObserver } from "../core/types.ts"
import type { Questions } from "../question/questions.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import { newId, type Store } from "../store/store.ts"
import type { Conversations } from "./conversations.ts"
import type { TaskBoard } from "./task-board.ts"

export interface InboundGateDeps {
  store: Store
  observer?: WorkObserver
  access: Access
  questions: Questions
  conversations: Conversations
  board: TaskBoard
  scheduler: Scheduler
  outbox: Outbox
  log: Logger
  /** prompts/commands: commands defined as files. */
  fileCommands: FileCommand[]
  /** Worker types, for `@<worker> <text>`. */
  workerTypes: ReadonlySet<string>
}

/** What the sender alone is shown when they press a button of someone else's question. */
export const NOT_YOUR_QUESTION = "This question was asked of someone else; only they can answer it."

/**
 * Where every chat message and button press comes in: a platform event seen before is dropped,
 * a stranger gets a pairing code and reaches no model, a command runs without a model deciding,
 * an open question takes its answer, and anything else goes to the conversation's inbox.
 */
export class InboundGate {
  /** Platform event ids being handled right now: a duplicate racing the first is dropped too. */
  private taking = new Set<string>()

  constructor(private readonly deps: InboundGateDeps) {}

  /** The commands users may type, for channels that list them. */
  commands(): CommandInfo[] {
    return [...BUILT_IN, ...this.deps.fileCommands.map((c) => ({ name: c.name, description: c.description }))]
  }

  /** What an adapter's `onMessage` answers: a message is durably taken (or ignored) once this
   *  resolves; it rejects when it could not be stored. */
  async take(message: InboundMessage): Promise<InboundOutcome> {
    return (await this.inbound(message)) === "not_yours" ? { notice: NOT_YOUR_QUESTION } : {}
  }

  /** Returns false when nothing was taken (a duplicate or a stranger), "not_yours" for a button
   *  of a question asked of another user. */
  async inbound(message: InboundMessage): Promise<boolean | "not_yours"> {
    const { store, access, questions, conversations, log } = this.deps
    const eventId = message.eventId
    if (eventId !== undefined) {
      if (this.taking.has(eventId) || (await store.seen(eventId))) {
        log.info({ eventId }, "platform event delivered again; ignored")
        this.deps.observer?.duplicateIgnored()
        return false
      }
      this.taking.add(eventId)
    }
    try {
      if (!(await access.allows(message.user))) {
        await access.stranger(message)
        return false
      }
      // A command comes before an open question's answer: /new or /cancel must still work while
      // the Teller waits, or a question could hold the conversation until its deadline.
      const command = message.action === undefined ? parseCommand(message.text, this.deps.fileCommands, this.deps.workerTypes) : undefined
      const forQuestion = message.action !== undefined || questions.openIn(message.conversation) !== undefined
      // The event id is recorded before acting, so nothing is acted on twice. An ordinary
      // message is recorded in the same write; for a command or an answer, a crash between the
      // two writes loses that message (the platform will not resend it).
      if (!command && !forQuestion) {
        await conversations.userMessage(message.conversation, message.user, message.text, message.text, eventId)
        return true
      }
      if (eventId !== undefined) await store.save({ seen: [eventId] })
      const taken = command ? undefined : await questions.take(message)
      if (taken === "stale") log.info({ conversation: message.conversation }, "button of a closed question pressed; ignored")
      if (taken === "not_yours") return "not_yours"
      if (command) await this.command(message, command)
      else if (!taken) await conversations.userMessage(message.conversation, message.user, message.text, message.text)
      return true
    } finally {
      if (eventId !== undefined) this.taking.delete(eventId)
    }
  }

  private async command(message: InboundMessage, command: Parsed): Promise<void> {
    const { conversation, user } = message
    const { board, conversations, scheduler } = this.deps
    const origin = `command:${message.eventId ?? newId()}`
    const typed = { history: [{ id: newId(), conversation, role: "user" as const, text: message.text }] }
    const answer = (text: string) => this.deps.outbox.add(conversation, text, origin, typed)
    switch (command.kind) {
      case "tasks":
        return void (await answer(this.tasksText(conversation)))
      case "cancel": {
        if (!command.id) return void (await answer("Usage: /cancel <task id> (see /tasks)"))
        const task = board.get(command.id)
        const ok = (await scheduler.cancel(command.id, conversation)) || (task?.conversation === conversation && (await board.abort(command.id, "cancelled by the user")))
        return void (await answer(ok ? `Cancelled ${command.id}.` : `No queued or running task or schedule ${command.id} in this conversation.`))
      }
      case "new":
        await conversations.newTellerSession(conversation, user)
        await answer("Started a fresh conversation. What I remembered is still there.")
        // Messages held behind the dismissed question go to the new session.
        return conversations.resume(conversation)
      case "pairing":
        return void (await answer(await this.pairingCommand(user, command.args)))
      case "worker":
        return board.startCommand(message, origin, command.agent, command.prompt, `@${command.agent}`, typed)
      case "file":
        if (command.command.subtask) return board.startCommand(message, origin, command.command.agent, command.prompt, `/${command.command.name}`, typed)
        return conversations.userMessage(conversation, user, message.text, command.prompt)
    }
  }

  private tasksText(conversation: ConversationId): string {
    const short = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text)
    const tasks = this.deps.board
      .openIn(conversation)
      .map((t) => `• ${t.id} — ${t.status}${t.type === "conditional" ? " (waits for its condition)" : ""}, ${t.agent}: ${short(t.prompt)}`)
    const triggers = this.deps.scheduler
      .list(conversation)
      .map((t) => `• ${t.id} — schedule (${t.kind}), next ${t.nextRunAt ?? "when its condition holds"}, last ${t.lastOutcome ?? "none yet"}: ${short(t.prompt)}`)
    const lines = [...tasks, ...triggers]
    return lines.length === 0 ? "No tasks are queued or running, and there are no schedules." : lines.join("\n")
  }

  private async pairingCommand(user: UserId, args: string[]): Promise<string> {
    const { access } = this.deps
    if (!access.isOwner(user)) return "Only the owner may do that."
    if (args[0] === "approve" && args[1]) {
      const result = await access.approve(args[1])
      return "error" in result ? `Could not approve: ${result.error}.` : `Approved ${result.user}.`
    }
    if (args[0] === "list") {
      const pending = access.pending()
      return pending.length === 0 ? "No pairing requests." : pending.map((p) => `• ${p.code} — ${p.user} (until ${p.expiresAt})`).join("\n")
    }
    return "Usage: /pairing approve <code>, /pairing list"
  }
}
