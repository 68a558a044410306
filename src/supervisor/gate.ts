import type { Logger } from "pino"
import type { Access } from "../access/access.ts"
import type { Attachments } from "../attachments/attachments.ts"
import type { QuotaGuard } from "../quota/quota-guard.ts"
import type { Outbox } from "../channel/outbox.ts"
import { BUILT_IN, parseCommand, type FileCommand, type Parsed } from "../command/commands.ts"
import { resolveParts } from "../command/template-parts.ts"
import type { CommandInfo, ConversationId, InboundMessage, InboundOutcome, UserId, WorkObserver } from "../core/types.ts"
import type { Questions } from "../question/questions.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import { newId } from "../store/ids.ts"
import { defused, untrusted } from "../trust/envelope.ts"
import type { Store } from "../store/store.ts"
import type { Profiles } from "../user/profiles.ts"
import { shortLocalTime } from "../user/time-zone.ts"
import type { Conversations } from "./conversations.ts"
import { resolveId } from "./id-prefix.ts"
import { isStopPress, pressStop } from "./stop-button.ts"
import type { TaskBoard } from "./task-board.ts"
import { tasksText } from "./task-listing.ts"

export interface InboundGateDeps {
  store: Store
  observer?: WorkObserver
  access: Access
  questions: Questions
  conversations: Conversations
  board: TaskBoard
  scheduler: Scheduler
  outbox: Outbox
  attachments: Attachments
  /** Messages per minute and the day's tokens of users who are not owners. */
  quota: QuotaGuard
  profiles: Profiles
  /** /memory: the user's notes as one message. */
  memoryOverview: (user: UserId) => Promise<string>
  log: Logger
  /** prompts/commands: commands defined as files. */
  fileCommands: FileCommand[]
  /** Worker types, for `@<worker> <text>`. */
  workerTypes: ReadonlySet<string>
  /** A user's workspace folder: what a command's `[[path]]` and `` !`command` `` work in. */
  workspaceOf: (user: UserId) => string
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
    const taken = await this.inbound(forwarded(message))
    return typeof taken === "object" ? taken : {}
  }

  /** Returns false when nothing was taken (a duplicate or a stranger); an outcome when the
   *  sender is to be told something (see InboundOutcome). */
  private async inbound(message: InboundMessage): Promise<boolean | InboundOutcome> {
    const { store, access, questions, conversations, log } = this.deps
    const eventId = message.eventId
    if (eventId !== undefined) {
      // Claimed before the store is asked: a copy arriving during that lookup (or during a
      // message's file downloads) must find it taken.
      const racing = this.taking.has(eventId)
      if (!racing) this.taking.add(eventId)
      if (racing || (await store.seen(eventId))) {
        if (!racing) this.taking.delete(eventId)
        log.info({ eventId }, "platform event delivered again; ignored")
        this.deps.observer?.duplicateIgnored()
        return false
      }
    }
    try {
      if (!(await access.allows(message.user))) {
        await access.stranger(message)
        return false
      }
      // Over QUOTA_MESSAGES_PER_MINUTE: not taken (no model call), the sender told once per burst.
      // A button press answers a question already asked: it is always taken.
      if (message.action === undefined && (await this.refused(message, this.deps.quota.rateRefusal(message.user)))) return true
      if (message.timezone !== undefined) await this.deps.profiles.platformTimeZone(message.user, message.timezone)
      if (message.attachments?.length) {
        await this.withFiles(message)
        return true
      }
      // A command comes before an open question's answer: /new or /cancel must still work while
      // the Teller waits, or a question could hold the conversation until its deadline.
      const command = message.action === undefined ? parseCommand(message.text, this.deps.fileCommands, this.deps.workerTypes) : undefined
      const forQuestion = message.action !== undefined || questions.openIn(message.conversation) !== undefined
      // The event id is recorded before acting, so nothing is acted on twice. An ordinary
      // message is recorded in the same write; for a command or an answer, a crash between the
      // two writes loses that message (the platform will not resend it).
      if (!command && !forQuestion) {
        if (await this.refused(message, await this.deps.quota.tokensNotice(message.user))) return true
        // Looked at before it is queued, which may start a turn of its own.
        const queued = conversations.turnAuthor(message.conversation) !== undefined
        await conversations.userMessage(message.conversation, message.user, message.text, message.text, eventId)
        return queued ? { queued } : true
      }
      if (eventId !== undefined) await store.save({ seen: [eventId] })
      if (isStopPress(message)) {
        const notice = await pressStop(message, { task: (id) => this.deps.board.get(id), abort: (id, reason) => this.deps.board.abort(id, reason), isOwner: (user) => access.isOwner(user) })
        return notice === undefined ? true : { notice }
      }
      const taken = command ? undefined : await questions.take(message)
      if (taken === "stale") log.info({ conversation: message.conversation }, "button of a closed question pressed; ignored")
      if (taken === "not_yours") return { notice: NOT_YOUR_QUESTION }
      if (command) await this.command(message, command)
      else if (!taken) await conversations.userMessage(message.conversation, message.user, message.text, message.text)
      return true
    } finally {
      if (eventId !== undefined) this.taking.delete(eventId)
    }
  }

  /** A message a quota refused (`refusal` defined): recorded as seen, so a redelivery is not
   *  taken either, and the sender told why unless they were already ("" ). */
  private async refused(message: InboundMessage, refusal: string | undefined): Promise<boolean> {
    if (refusal === undefined) return false
    if (message.eventId !== undefined) await this.deps.store.save({ seen: [message.eventId] })
    if (refusal) await this.deps.outbox.add(message.conversation, refusal, `quota:${message.eventId ?? newId()}`)
    return true
  }

  /** A message with files: they are saved first (the lines describing them are part of what
   *  is recorded), then the message goes to the Teller like any other — a caption is never
   *  taken as a command or an answer, since the files would be lost with it. */
  private async withFiles(message: InboundMessage): Promise<void> {
    const { conversations, outbox, store } = this.deps
    if (await this.refused(message, await this.deps.quota.tokensNotice(message.user))) return
    const taken = await this.deps.attachments.take(message.user, message.text, message.attachments ?? [], message.forwardedFrom)
    if (taken.text) await conversations.userMessage(message.conversation, message.user, taken.text, taken.text, message.eventId, taken.images)
    else if (message.eventId !== undefined) await store.save({ seen: [message.eventId] })
    if (taken.notices.length > 0) await outbox.add(message.conversation, taken.notices.join("\n"), `files:${message.eventId ?? newId()}`)
  }

  private async command(message: InboundMessage, command: Parsed): Promise<void> {
    const { conversation, user } = message
    const { board, conversations, scheduler } = this.deps
    const origin = `command:${message.eventId ?? newId()}`
    const typed = { history: [{ id: newId(), conversation, role: "user" as const, text: message.text }] }
    const answer = (text: string) => this.deps.outbox.add(conversation, text, origin, typed)
    // In a conversation several people share, a user's commands reach their own turns, tasks and
    // schedules only; an owner's reach everyone's.
    const scope = this.deps.access.isOwner(user) ? undefined : user
    switch (command.kind) {
      case "help":
        return void (await answer(helpText(this.commands(), this.deps.access.isOwner(user))))
      case "tasks":
        return void (await answer(tasksText(board.openIn(conversation), scheduler.list(conversation), this.deps.profiles.timeZoneOf(user))))
      case "cancel": {
        if (!command.id) return void (await answer("Usage: /cancel <task id> (see /tasks)"))
        const resolved = board.resolve(conversation, command.id, scope)
        if ("error" in resolved) return void (await answer(resolved.unknown ? `No queued or running task or schedule ${command.id} in this conversation.` : resolved.error))
        const id = resolved.id
        const task = board.get(id)
        const ok = (await scheduler.cancel(id, conversation)) || (task?.conversation === conversation && (await board.abort(id, "cancelled by the user")))
        return void (await answer(ok ? `Cancelled ${id}.` : `No queued or running task or schedule ${command.id} in this conversation.`))
      }
      case "pause":
      case "resume":
        return void (await answer(await this.pauseOrResume(command.kind, conversation, user, command.id, scope)))
      case "stop":
        return void (await answer(await this.stop(conversation, scope)))
      case "timezone":
        return void (await answer(await this.timeZoneCommand(user, command.zone)))
      case "memory":
        return void (await answer(await this.deps.memoryOverview(user)))
      case "new": {
        const busy = this.othersAtWork(conversation, scope)
        if (busy) return void (await answer(`A request of ${busy} is still being handled here; /new would cut it short. Try again once it is done.`))
        await conversations.newTellerSession(conversation, user)
        await answer("Started a fresh conversation. What I remembered is still there.")
        // Messages held behind the dismissed question go to the new session.
        return conversations.resume(conversation)
      }
      case "pairing":
        return void (await answer(await this.pairingCommand(user, command.args)))
      case "worker":
        return board.startCommand(message, origin, command.agent, command.prompt, `@${command.agent}`, typed)
      case "file": {
        const prompt = await resolveParts(command.prompt, command.command.parts, { workspace: this.deps.workspaceOf(user), workerTypes: this.deps.workerTypes })
        if (command.command.subtask) return board.startCommand(message, origin, command.command.agent, prompt, `/${command.command.name}`, typed)
        return conversations.userMessage(conversation, user, message.text, prompt)
      }
    }
  }

  /** /pause and /resume: a schedule of this conversation, by id or unique prefix. */
  private async pauseOrResume(kind: "pause" | "resume", conversation: ConversationId, user: UserId, given: string | undefined, scope: UserId | undefined): Promise<string> {
    const { scheduler, profiles } = this.deps
    if (!given) return `Usage: /${kind} <schedule id> (see /tasks)`
    const schedules = scheduler.list(conversation).filter((trigger) => scope === undefined || trigger.user === scope)
    const resolved = resolveId(given, schedules.map((trigger) => trigger.id), "schedule")
    if ("error" in resolved) return `Could not ${kind}: ${resolved.error}.`
    const changed = kind === "pause" ? await scheduler.pauseTrigger(resolved.id, conversation) : await scheduler.resumeTrigger(resolved.id, conversation)
    if (typeof changed === "string") return `Could not ${kind}: ${changed}.`
    if (changed.status === "paused") return `Paused ${changed.id}: it will not run until you /resume it.`
    if (changed.status === "ended") return `${changed.id} ended: ${changed.endReason}.`
    const next = changed.nextRunAt ? `next run ${shortLocalTime(changed.nextRunAt, profiles.timeZoneOf(user))}` : "it waits for its condition again"
    return `Resumed ${changed.id}: ${next}. Runs missed while paused are not caught up.`
  }

  /** /stop: the Teller's turn and every task of the conversation, with the tasks they started
   *  (`scope`'s only, when given). */
  private async stop(conversation: ConversationId, scope: UserId | undefined): Promise<string> {
    const turn = this.deps.conversations.stopTurn(conversation, scope)
    const tasks = await this.deps.board.stopAll(conversation, "stopped by the user (/stop)", scope)
    if (!turn && tasks.length === 0) return "Nothing is running here."
    const parts = [...(turn ? ["the reply I was writing"] : []), ...(tasks.length ? [`${tasks.length} task${tasks.length === 1 ? "" : "s"} (${tasks.join(", ")})`] : [])]
    return `Stopped ${parts.join(" and ")}. Schedules stay; /pause one to hold it.`
  }

  /** Who else's work /new would cut short (`scope` set: the user is no owner): a turn running for
   *  them, or the Teller's open question to them. */
  private othersAtWork(conversation: ConversationId, scope: UserId | undefined): UserId | undefined {
    if (scope === undefined) return undefined
    const others = [this.deps.conversations.turnAuthor(conversation), this.deps.questions.openIn(conversation, "ask_user")?.user]
    return others.find((other) => other !== undefined && other !== scope)
  }

  private async timeZoneCommand(user: UserId, zone: string | undefined): Promise<string> {
    const { profiles } = this.deps
    if (!zone) {
      const source = { user: "set by you", platform: "from your chat profile", default: "Steward's default" }[profiles.sourceOf(user)]
      return `Your time zone is ${profiles.timeZoneOf(user)} (${source}). Set it with /timezone <IANA name>, e.g. /timezone Europe/Berlin.`
    }
    const set = await profiles.setTimeZone(user, zone)
    if ("error" in set) return `Could not set the time zone: ${set.error}.`
    return `Your time zone is now ${set.timeZone}; it is ${shortLocalTime(new Date(), set.timeZone)} there. New schedules and the times I show use it.`
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

/** /help: every command the user may run, with what it does (owner-only ones for owners). */
function helpText(commands: readonly CommandInfo[], owner: boolean): string {
  const lines = commands.filter((command) => owner || !command.ownerOnly).map((command) => `/${command.name} — ${command.description}`)
  return ["Commands:", ...lines, "Anything else you write goes to Steward."].join("\n")
}

/** A forwarded message as the core takes it: the words someone else wrote are outside content,
 *  in an envelope (trust/envelope.ts) — they taint the turn, cannot pass for a command or an
 *  answer, and name no host for fetch_url. */
function forwarded(message: InboundMessage): InboundMessage {
  if (message.forwardedFrom === undefined || message.text === "") return message
  const origin = message.forwardedFrom.replace(/\s+/g, " ").slice(0, 100)
  return { ...message, text: `(The user forwarded a message written by ${defused(origin)}:)\n${untrusted(`a message forwarded from ${origin}`, message.text)}` }
}
