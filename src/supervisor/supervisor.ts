import { EventEmitter } from "node:events"
import type { LanguageModel } from "ai"
import type { Logger } from "pino"
import { DEFAULT_WORKER, environment, type Agent, type Agents } from "../agent/agents.ts"
import { runLoop, toolCalls, type LoopInput, type LoopOutcome } from "../agent/loop.ts"
import { Access } from "../access/access.ts"
import { channelOf, type CommandInfo, type InboundMessage, type ProgressUpdate } from "../channel/channel.ts"
import { BUILT_IN, loadCommands, parseCommand, type FileCommand, type Parsed } from "../command/commands.ts"
import type { Config } from "../config/config.ts"
import { disabled, type Ruleset } from "../permission/permission.ts"
import { TERMINAL, type InboxEvent, type OutboxRecord, type SessionRecord, type TaskRecord, type TaskStatus, type ToolSummary } from "../store/records.ts"
import { newId, type Store, type StoredRecords } from "../store/store.ts"
import type { DelegateRequest, ListTasksFilter, MemoryService, Services, TaskSummary } from "../tool/services.ts"
import { Questions, type Answer, type Question } from "../question/questions.ts"
import { whyNever, type Condition } from "../schedule/condition.ts"
import type { FiringRecord, TriggerRecord } from "../schedule/records.ts"
import type { ScheduleRequest } from "../schedule/request.ts"
import { Scheduler, type SchedulerHost } from "../schedule/scheduler.ts"
import { AWAIT_ANSWER, ToolError, type Role, type ToolContext, type ToolDefinition } from "../tool/tool.ts"
import type { Outbox } from "./outbox.ts"
import { TaskQueue } from "./queue.ts"
import { readableReport, reportText } from "./report.ts"
import { Sessions, type Session } from "./sessions.ts"

/** A Teller turn interrupted this many times (crashes while it ran) is given up with an apology. */
const MAX_TURN_ATTEMPTS = 3
/** A task found running at start-up is re-queued once; crashing again fails it. */
const MAX_TASK_ATTEMPTS = 2

export interface SupervisorDeps {
  config: Config
  store: Store
  outbox: Outbox
  agents: Agents
  /** The model for an agent: its own (front matter) or its role's. */
  model: (agent: Agent) => LanguageModel
  tools: readonly ToolDefinition[]
  rules: Record<Role, Ruleset>
  memory: MemoryService & { recordCompaction(user: string, summary: string): Promise<void> }
  log: Logger
  /** prompts/commands: commands defined as files. */
  commandsDir?: string
}

interface Conversation {
  id: string
  user: string
  /** Events not yet handled, in arrival order. */
  events: InboxEvent[]
  busy: boolean
  /** Read from the store once, then kept. */
  tellerSessionId?: string
}

class Cancelled extends Error {}
class TimedOut extends Error {}

/**
 * Plain code, no model: owns every queue, timer and state change. Each change is written to
 * the store before it is acted on, and `start()` rebuilds the queues from the store.
 */
export class Supervisor implements Services, SchedulerHost {
  readonly workspaceDir: string
  readonly history: Store
  readonly memory: SupervisorDeps["memory"]
  /** "progress" (conversation, ProgressUpdate) for channels; "change" whenever work moves. */
  readonly events = new EventEmitter()

  private tasks = new Map<string, TaskRecord>()
  private byOrigin = new Map<string, string>()
  private workerQueue = new TaskQueue()
  private plannerQueue = new TaskQueue()
  private running = new Map<string, AbortController>()
  private progress = new Map<string, ToolSummary[]>()
  private conversations = new Map<string, Conversation>()
  private sessions: Sessions
  private agentTools = new Map<string, readonly ToolDefinition[]>()
  private stopping = false
  /** Turns and task runs under way, so stop() can wait for them. */
  private inflight = new Set<Promise<unknown>>()
  private questions: Questions
  readonly access: Access
  readonly scheduler: Scheduler
  /** Per conversation, the trigger firings whose reports the running Teller turn is handling. */
  private turnFirings = new Map<string, Set<string>>()
  private fileCommands: FileCommand[]
  /** Platform event ids being handled right now: a duplicate racing the first is dropped too. */
  private taking = new Set<string>()
  /** Conversations shown as busy ("typing…") to their channel. */
  private active = new Set<string>()

  constructor(private readonly deps: SupervisorDeps) {
    this.workspaceDir = `${deps.config.dataDir}/workspace`
    this.history = deps.store
    this.memory = deps.memory
    this.sessions = new Sessions(deps.store)
    this.questions = new Questions(deps.store, deps.outbox, deps.log, (event) => this.enqueueEvent(event))
    this.access = new Access(deps.config.allowedUsers, deps.store, deps.outbox, deps.log)
    this.scheduler = new Scheduler({ db: deps.store.db, host: this, log: deps.log.child({ module: "scheduler" }) })
    deps.outbox.onSettled = (record) => this.reportDelivery(record)
    const agentNames = new Set(["teller", "planner", ...deps.agents.workers.keys()])
    this.fileCommands = deps.commandsDir ? loadCommands(deps.commandsDir, agentNames) : []
  }

  // ── start-up ────────────────────────────────────────────────────────────────

  async start(): Promise<void> {
    const interrupted: TaskRecord[] = []
    for (const task of await this.deps.store.tasks()) {
      this.track(task)
      if (task.status === "running") interrupted.push(task)
    }
    for (const task of interrupted) {
      const failed = task.attempts >= MAX_TASK_ATTEMPTS
      const update: TaskRecord = failed
        ? { ...task, status: "failed", error: `interrupted ${task.attempts} times by a restart`, endedAt: now() }
        : { ...task, status: "queued" }
      await this.deps.store.save({ tasks: [update] })
      this.track(update)
      this.deps.log.warn({ task: task.id, failed }, "task was running when Steward stopped")
    }
    // Conditional tasks join the queue when their condition holds (awaitCondition, below).
    for (const task of this.tasks.values()) if (task.status === "queued" && task.type !== "conditional") this.queueOf(task).push(task.id, task.priority)
    for (const task of this.tasks.values()) if (TERMINAL.has(task.status)) await this.reportIfDone(task)
    for (const event of await this.deps.store.events()) this.conversation(event.conversation, event.user).events.push(event)
    await this.access.load()
    await this.questions.load()
    await this.scheduler.start()
    for (const task of this.tasks.values()) if (task.status === "queued" && task.type === "conditional") this.awaitCondition(task)
    this.dispatch()
    for (const conversation of this.conversations.values()) this.pump(conversation)
  }

  /** Aborts running work and waits for it to wind down. Tasks go back to the queue without
   *  counting the attempt — a shutdown is not a crash; turns are replayed from the log. */
  async stop(): Promise<void> {
    this.stopping = true
    this.questions.stop()
    await this.scheduler.stop()
    for (const controller of this.running.values()) controller.abort(new Error("Steward is stopping"))
    await Promise.allSettled(this.inflight)
  }

  /** Resolves once nothing is queued, running or waiting to be sent. */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.busy) return
        this.events.off("change", check)
        resolve()
      }
      this.events.on("change", check)
      check()
    })
  }

  get busy(): boolean {
    return (
      this.running.size > 0 ||
      this.workerQueue.size > 0 ||
      this.plannerQueue.size > 0 ||
      // Events held behind an open question wait for the user, not for Steward.
      [...this.conversations.values()].some((c) => c.busy || (c.events.length > 0 && !this.questions.openIn(c.id, "ask_user"))) ||
      this.deps.outbox.busy
    )
  }

  /** The commands users may type, for channels that list them. */
  commands(): CommandInfo[] {
    return [...BUILT_IN, ...this.fileCommands.map((c) => ({ name: c.name, description: c.description }))]
  }

  // ── inbound: Teller turns ───────────────────────────────────────────────────

  /**
   * Takes a chat message or button press: a platform event seen before is ignored; a stranger
   * gets a pairing code and reaches no model; a command runs without a model deciding; an open
   * question takes its answer; anything else wakes the conversation's Teller. Returns false
   * when nothing was taken (a duplicate or a stranger).
   */
  async inbound(message: InboundMessage): Promise<boolean> {
    const eventId = message.eventId
    if (eventId !== undefined) {
      if (this.taking.has(eventId) || (await this.deps.store.seen(eventId))) {
        this.deps.log.info({ eventId }, "platform event delivered again; ignored")
        return false
      }
      this.taking.add(eventId)
    }
    try {
      if (!(await this.access.allows(message.user))) {
        await this.access.stranger(message)
        return false
      }
      // A command comes before an open question's answer: /new or /cancel must still work while
      // the Teller waits, or a question could hold the conversation until its deadline.
      const command = message.action === undefined ? parseCommand(message.text, this.fileCommands, new Set(this.deps.agents.workers.keys())) : undefined
      const forQuestion = message.action !== undefined || this.questions.openIn(message.conversation) !== undefined
      // The event id is recorded before acting, so nothing is acted on twice. An ordinary
      // message is recorded in the same write; for a command or an answer, a crash between the
      // two writes loses that message (the platform will not resend it).
      if (!command && !forQuestion) {
        await this.userMessage(message.conversation, message.user, message.text, message.text, eventId)
        return true
      }
      if (eventId !== undefined) await this.deps.store.save({ seen: [eventId] })
      const taken = command ? undefined : await this.questions.take(message)
      if (taken === "stale") this.deps.log.info({ conversation: message.conversation }, "button of a closed question pressed; ignored")
      if (command) await this.command(message, command)
      else if (!taken) await this.userMessage(message.conversation, message.user, message.text, message.text)
      return true
    } finally {
      if (eventId !== undefined) this.taking.delete(eventId)
    }
  }

  /** `typed` is what the user wrote (for the history); `text` what the Teller is given. */
  private async userMessage(conversation: string, user: string, typed: string, text: string, platformEventId?: string): Promise<void> {
    const event: InboxEvent = { id: newId(), conversation, user, kind: "user_message", text, createdAt: now(), attempts: 0 }
    await this.deps.store.save({ events: [event], history: [{ id: event.id, conversation, role: "user", text: typed }], seen: platformEventId === undefined ? [] : [platformEventId] })
    this.enqueueEvent(event)
  }

  private async command(message: InboundMessage, command: Parsed): Promise<void> {
    const { conversation, user } = message
    const origin = `command:${message.eventId ?? newId()}`
    const answer = (text: string) => this.deps.outbox.add(conversation, text, origin, { history: [{ id: newId(), conversation, role: "user", text: message.text }] })
    switch (command.kind) {
      case "tasks":
        return void (await answer(this.tasksText(conversation)))
      case "cancel": {
        if (!command.id) return void (await answer("Usage: /cancel <task id> (see /tasks)"))
        const task = this.tasks.get(command.id)
        const ok = (await this.scheduler.cancel(command.id, conversation)) || (task?.conversation === conversation && (await this.abort(command.id, "cancelled by the user")))
        return void (await answer(ok ? `Cancelled ${command.id}.` : `No queued or running task or schedule ${command.id} in this conversation.`))
      }
      case "new":
        await this.newTellerSession(conversation, user)
        await answer("Started a fresh conversation. What I remembered is still there.")
        // Messages held behind the dismissed question go to the new session.
        return this.pump(this.conversation(conversation, user))
      case "pairing":
        return void (await answer(await this.pairingCommand(user, command.args)))
      case "worker":
        return this.startCommandTask(message, origin, command.agent, command.prompt, `@${command.agent}`)
      case "file":
        if (command.command.subtask) return this.startCommandTask(message, origin, command.command.agent, command.prompt, `/${command.command.name}`)
        return this.userMessage(conversation, user, message.text, command.prompt)
    }
  }

  private tasksText(conversation: string): string {
    const short = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text)
    const tasks = [...this.tasks.values()]
      .filter((t) => t.conversation === conversation && !TERMINAL.has(t.status))
      .map((t) => `• ${t.id} — ${t.status}${t.type === "conditional" ? " (waits for its condition)" : ""}, ${t.agent}: ${short(t.prompt)}`)
    const triggers = this.scheduler
      .list(conversation)
      .map((t) => `• ${t.id} — schedule (${t.kind}), next ${t.nextRunAt ?? "when its condition holds"}, last ${t.lastOutcome ?? "none yet"}: ${short(t.prompt)}`)
    const lines = [...tasks, ...triggers]
    return lines.length === 0 ? "No tasks are queued or running, and there are no schedules." : lines.join("\n")
  }

  private async pairingCommand(user: string, args: string[]): Promise<string> {
    if (!this.access.isOwner(user)) return "Only the owner may do that."
    if (args[0] === "approve" && args[1]) {
      const result = await this.access.approve(args[1])
      return "error" in result ? `Could not approve: ${result.error}.` : `Approved ${result.user}.`
    }
    if (args[0] === "list") {
      const pending = this.access.pending()
      return pending.length === 0 ? "No pairing requests." : pending.map((p) => `• ${p.code} — ${p.user} (until ${p.expiresAt})`).join("\n")
    }
    return "Usage: /pairing approve <code>, /pairing list"
  }

  /** /new: later turns use a fresh Teller session; an open question of the old one is closed. */
  private async newTellerSession(conversation: string, user: string): Promise<void> {
    const session: SessionRecord = { id: newId(), role: "teller", agent: "teller", conversation, user, createdAt: now() }
    await this.questions.dismiss(conversation)
    await this.deps.store.save({ conversations: [{ id: conversation, user, tellerSessionId: session.id }], sessions: [session] })
    this.sessions.adopt(session)
    this.conversation(conversation, user).tellerSessionId = session.id
  }

  /** A command that runs a role directly, as a task of its own (seed 001's subtask): its result
   *  wakes the Teller like any batch, followed by the seed's synthetic instruction. */
  private async startCommandTask(message: InboundMessage, origin: string, agent: string, prompt: string, command: string): Promise<void> {
    const role = agent === "planner" ? "planner" : "worker"
    const task: TaskRecord = {
      ...this.newTask({ conversation: message.conversation, user: message.user, sessionId: (await this.tellerSession(this.conversation(message.conversation, message.user))).info.id }, origin, role, agent),
      prompt: prompt || "(no arguments)",
      command,
    }
    await this.enqueueTask(task, { history: [{ id: newId(), conversation: message.conversation, role: "user", text: message.text }] })
  }

  /** Writes a new task with its session (and whatever else `also` holds) and queues it. */
  private async enqueueTask(task: TaskRecord, also: Partial<StoredRecords> = {}): Promise<void> {
    const session = this.sessionOf(task)
    await this.deps.store.save({ ...also, tasks: [task], sessions: [session] })
    this.sessions.adopt(session)
    this.track(task)
    this.queueOf(task).push(task.id, task.priority)
    this.dispatch()
  }

  private enqueueEvent(event: InboxEvent): void {
    const conversation = this.conversation(event.conversation, event.user)
    conversation.events.push(event)
    this.pump(conversation)
  }

  private conversation(id: string, user: string): Conversation {
    let conversation = this.conversations.get(id)
    if (!conversation) {
      conversation = { id, user, events: [], busy: false }
      this.conversations.set(id, conversation)
    }
    return conversation
  }

  /** Turns of one conversation run one at a time, in arrival order. */
  private pump(conversation: Conversation): void {
    if (conversation.busy || conversation.events.length === 0 || this.stopping) return
    // The Teller is stopped at an ask_user call: it resumes with the answer, and whatever else
    // arrived meanwhile is handed to it in that turn.
    if (this.questions.openIn(conversation.id, "ask_user")) return
    conversation.busy = true
    this.changed()
    this.trackRun(
      this.turn(conversation)
        .catch((error) => this.deps.log.error({ err: error, conversation: conversation.id }, "turn failed unexpectedly"))
        .finally(() => {
          conversation.busy = false
          this.changed()
          this.pump(conversation)
        }),
    )
  }

  private trackRun(run: Promise<unknown>): void {
    this.inflight.add(run)
    void run.finally(() => this.inflight.delete(run))
  }

  private async turn(conversation: Conversation): Promise<void> {
    const first = conversation.events[0]!
    const attempt = { ...first, attempts: first.attempts + 1 }
    // Not awaited on its own: the store keeps write order, and the turn's first model call waits
    // for a later write (its input), so the attempt is on disk before anything is acted on.
    this.deps.store.save({ events: [attempt] }).catch((error) => this.deps.log.error({ err: error }, "could not record a turn attempt"))
    conversation.events[0] = attempt
    const session = await this.tellerSession(conversation)
    if (attempt.attempts > MAX_TURN_ATTEMPTS) {
      conversation.events.shift()
      // Results are sent as they are; a message the user can send again.
      if (attempt.kind === "task_results") await this.relayResults(attempt)
      else await this.deps.outbox.add(conversation.id, "Sorry — I kept failing while handling your last message, so I stopped. Please send it again.", `giveup:${attempt.id}`)
      await this.deps.store.save({ eventsDone: [attempt.id] })
      return
    }
    const consumed: InboxEvent[] = []
    const firings = new Set<string>()
    this.turnFirings.set(conversation.id, firings)
    const takeInput = () => {
      const taken = conversation.events.splice(0, conversation.events.length)
      consumed.push(...taken)
      for (const event of taken) if (event.firingId) firings.add(event.firingId)
      // An answer reaches the Teller as the result of its ask_user call, not as a message.
      return taken
        .filter((event) => event.kind !== "answer" && !session.has(event.id))
        .map((event) => ({ eventId: event.id, text: event.text, fromUser: event.kind === "user_message" }))
    }
    const turnStart = session.records.length
    const controller = new AbortController()
    let outcome: LoopOutcome
    let failed = false
    try {
      this.running.set(`turn:${conversation.id}`, controller)
      // The turn acts for whoever wrote the message that started it — in a shared thread not
      // necessarily the conversation's first user: their memory, their tasks, their rights.
      outcome = await this.run(this.deps.agents.teller, session, controller.signal, { conversation: conversation.id, user: attempt.user }, takeInput)
    } catch (error) {
      if (this.stopping) {
        // Left pending: the next start replays the turn from the log.
        conversation.events.unshift(...consumed)
        return
      }
      this.deps.log.error({ err: error, conversation: conversation.id }, "Teller turn failed")
      // The event that started the turn is answered (with the apology) even if the run failed
      // before taking it, so a failure that repeats does not replay it forever.
      if (!consumed.includes(attempt)) consumed.unshift(...conversation.events.splice(conversation.events.indexOf(attempt), 1))
      outcome = { status: "done", text: "" }
      failed = true
      await this.deps.outbox.add(conversation.id, `Sorry — I could not answer that: ${errorText(error)}`, `error:${consumed[0]?.id ?? first.id}`)
    } finally {
      this.running.delete(`turn:${conversation.id}`)
      this.turnFirings.delete(conversation.id)
    }
    const firingId = firings.values().next().value
    if (outcome.status === "done" && outcome.text && !this.repliedSince(session, turnStart, consumed)) {
      // A turn that ends in plain text without calling reply still answers the user.
      await this.deps.outbox.add(conversation.id, outcome.text, `final:${session.records.at(-1)!.id}`, {}, firingId)
    }
    // Task results are never dropped: when the turn failed before the Teller replied, or it
    // posted nothing for a scheduled run, the results themselves go out.
    for (const event of consumed) {
      if (event.kind !== "task_results") continue
      const relayed = event.firingId ? this.deps.outbox.hasFiring(event.firingId) : !failed || this.repliedSince(session, turnStart, consumed)
      if (!relayed) await this.relayResults(event)
    }
    await this.deps.store.save({ eventsDone: consumed.map((event) => event.id) })
  }

  /** Sends a batch's results to the user as they are, for when the Teller did not relay them. */
  private async relayResults(event: InboxEvent): Promise<void> {
    const heading = event.firingId ? "Scheduled task report" : "Results of your tasks"
    await this.deps.outbox.add(event.conversation, `${heading}:\n\n${readableReport(event.text)}`, `report:${event.id}`, {}, event.firingId)
  }

  /** Did the Teller call reply during this turn (including before a crash that replayed it)? */
  private repliedSince(session: Session, turnStart: number, consumed: InboxEvent[]): boolean {
    const firstEvent = session.records.findIndex((record) => consumed.some((event) => event.id === record.eventId))
    const from = firstEvent >= 0 ? Math.min(firstEvent, turnStart) : turnStart
    return session.records.slice(from).some((record) => toolCalls(record.message).some((call) => call.toolName === "reply"))
  }

  private async tellerSession(conversation: Conversation): Promise<Session> {
    const info = (id: string): SessionRecord => ({ id, role: "teller", agent: "teller", conversation: conversation.id, user: conversation.user, createdAt: now() })
    if (!conversation.tellerSessionId) {
      const record = await this.deps.store.conversation(conversation.id)
      if (record) conversation.tellerSessionId = record.tellerSessionId
      else {
        const session = info(newId())
        await this.deps.store.save({ conversations: [{ id: conversation.id, user: conversation.user, tellerSessionId: session.id }], sessions: [session] })
        this.sessions.adopt(session)
        conversation.tellerSessionId = session.id
      }
    }
    return this.sessions.open(info(conversation.tellerSessionId))
  }

  // ── tasks ───────────────────────────────────────────────────────────────────

  async delegate(ctx: ToolContext, request: DelegateRequest): Promise<{ taskId: string }> {
    const origin = `${ctx.sessionId}:${ctx.callId}`
    const known = this.byOrigin.get(origin) ?? this.tasks.get(ctx.taskId ?? "")?.staged?.find((t) => t.origin === origin)?.id
    if (known) return { taskId: known }
    // Workers never delegate (no recursion), whatever rules a permissions file adds.
    if (ctx.role === "worker") throw new ToolError("Workers cannot delegate: do the work yourself, or report what is missing.")
    const role = ctx.role === "teller" ? "planner" : "worker"
    const continued = request.sessionId ? await this.sessions.exists(request.sessionId) : undefined
    // An unknown or foreign session id starts fresh rather than failing the call; so does one
    // that an unfinished task is still using, since two runs cannot share one session log.
    const continues = continued !== undefined && continued.conversation === ctx.conversation && continued.role === role && !this.sessionInUse(continued.id)
    const task: TaskRecord = {
      ...this.newTask(ctx, origin, role, role === "planner" ? "planner" : (request.worker ?? DEFAULT_WORKER)),
      type: request.type,
      condition: request.condition,
      prompt: request.prompt,
      priority: request.priority,
      timeout: request.timeout,
      sessionId: continues ? continued.id : newId(),
      continuesSession: continues || undefined,
    }
    if (role === "worker") {
      // Staged in the Planner's record; committed only when the Planner succeeds.
      const planner = this.tasks.get(ctx.taskId!)!
      const update = { ...planner, staged: [...(planner.staged ?? []), task] }
      await this.deps.store.save({ tasks: [update] })
      this.track(update)
      return { taskId: task.id }
    }
    const session = continues ? undefined : this.sessionOf(task)
    await this.deps.store.save({ tasks: [task], sessions: session ? [session] : [] })
    if (session) this.sessions.adopt(session)
    this.track(task)
    this.plannerQueue.push(task.id, task.priority)
    this.dispatch()
    return { taskId: task.id }
  }

  private sessionInUse(sessionId: string): boolean {
    for (const task of this.tasks.values()) {
      if (task.sessionId === sessionId && !TERMINAL.has(task.status)) return true
      if (task.staged?.some((staged) => staged.sessionId === sessionId)) return true
    }
    return false
  }

  /** A queued one-shot task with the defaults, in a fresh child session of the caller's. */
  private newTask(caller: { conversation: string; user: string; sessionId: string }, origin: string, role: TaskRecord["role"], agent: string): TaskRecord {
    return {
      id: newId(),
      role,
      agent,
      type: "oneshot",
      prompt: "",
      priority: 5,
      timeout: null,
      status: "queued",
      conversation: caller.conversation,
      user: caller.user,
      parentSessionId: caller.sessionId,
      sessionId: newId(),
      origin,
      attempts: 0,
      createdAt: now(),
    }
  }

  // ── schedules (the Scheduler's host) ───────────────────────────────────────

  async schedule(ctx: ToolContext, request: ScheduleRequest): Promise<{ taskId: string }> {
    if (ctx.role !== "planner") throw new ToolError("Only the Planner creates schedules.")
    if (request.target !== undefined) await this.checkTarget(request.target, ctx.user)
    return this.scheduler.create(request, { conversation: ctx.conversation, user: ctx.user, origin: `${ctx.sessionId}:${ctx.callId}` })
  }

  /** A report target must be a conversation of a channel that runs here, and one the user may
   *  post to: an owner anywhere, anyone else only in a conversation of their own. */
  private async checkTarget(target: string, user: string): Promise<void> {
    const channels = this.deps.outbox.channelNames()
    if (!/^[a-z]+:\S+$/.test(target) || !channels.includes(channelOf(target))) {
      throw new ToolError(`target "${target}" is not a conversation of a running channel: expected <channel>:<id> with channel one of ${channels.join(", ")}`)
    }
    if (this.access.isOwner(user)) return
    const owner = this.conversations.get(target)?.user ?? (await this.deps.store.conversation(target))?.user
    if (owner !== user) throw new ToolError(`target "${target}" is not a conversation of yours; reports can go to this conversation or another of your own`)
  }

  /** A firing's run: a worker task of its own in the report's conversation, whose result wakes
   *  that conversation's Teller. Idempotent by firing, as the Scheduler requires. */
  async startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<string> {
    const origin = `firing:${firing.id}`
    const known = this.byOrigin.get(origin)
    if (known) return known
    const conversation = trigger.target ?? trigger.conversation
    const teller = await this.tellerSession(this.conversation(conversation, trigger.user))
    const task: TaskRecord = {
      ...this.newTask({ conversation, user: trigger.user, sessionId: teller.info.id }, origin, "worker", DEFAULT_WORKER),
      prompt: trigger.prompt,
      timeout: trigger.timeout,
      firingId: firing.id,
    }
    await this.enqueueTask(task)
    return task.id
  }

  taskStatus(taskId: string): TaskStatus | undefined {
    const task = this.tasks.get(taskId)
    if (task) return task.status
    // A worker task staged by a Planner still running exists, but is not committed yet.
    for (const planner of this.tasks.values()) if (planner.staged?.some((staged) => staged.id === taskId)) return "queued"
    return undefined
  }

  async notify(trigger: TriggerRecord, text: string): Promise<void> {
    await this.deps.outbox.add(trigger.conversation, text, `notice:${trigger.id}:${newId()}`)
  }

  /** A conditional task joins the worker queue once its condition holds; one that can never
   *  hold is cancelled with that reason, which reports it. */
  private awaitCondition(task: TaskRecord): void {
    this.scheduler.wait(task.id, task.condition as Condition, task.createdAt, (result) => {
      const current = this.tasks.get(task.id)
      if (current?.status !== "queued") return
      if (result === "holds") {
        this.workerQueue.push(current.id, current.priority)
        this.dispatch()
      } else {
        const why = whyNever(task.condition as Condition, (id) => this.taskStatus(id))
        this.finish(current, { status: "cancelled", error: `its condition can never hold: ${why}` }).catch((error) => this.deps.log.error({ err: error, task: task.id }, "could not cancel a conditional task"))
      }
    })
  }

  /** Records a scheduled report's delivery on its firing; a report given up is also told to the
   *  trigger's owner, so no schedule fails silently. */
  private async reportDelivery(record: OutboxRecord): Promise<void> {
    if (!record.firingId) return
    try {
      if (record.status === "delivered") return await this.scheduler.delivered(record.firingId, record.messageId!)
      await this.scheduler.deliveryFailed(record.firingId, record.error ?? "not delivered")
      const triggerId = record.firingId.split("/")[0]!
      const owner = this.scheduler.owner(triggerId)
      if (owner && owner !== record.conversation) {
        await this.deps.outbox.add(owner, `A scheduled report could not be delivered to ${record.conversation}: ${record.error ?? "unknown error"}`, `undelivered:${record.id}`)
      }
    } catch (error) {
      this.deps.log.error({ err: error, firing: record.firingId }, "could not record a report's delivery")
    }
  }

  async ask(ctx: ToolContext, question: Question): Promise<Answer | typeof AWAIT_ANSWER> {
    if (ctx.role !== "teller") throw new ToolError("Only the Teller asks the user.")
    return (await this.questions.ask({ conversation: ctx.conversation, user: ctx.user, origin: `${ctx.sessionId}:${ctx.callId}` }, question, "ask_user")) ?? AWAIT_ANSWER
  }

  async approve(ctx: ToolContext, tool: string, pattern: string): Promise<boolean> {
    const who = ctx.role === "teller" ? "I" : `A ${ctx.agent} task`
    const question = { question: `${who} would like to use ${tool} on “${pattern}”. Allow it?`, options: ["Allow", "Deny"], default: "Deny", timeout: 600 }
    const { answer } = await this.questions.waitFor({ conversation: ctx.conversation, user: ctx.user, origin: `${ctx.sessionId}:${ctx.callId}:permission` }, question, ctx.abort)
    return answer === "Allow"
  }

  async listTasks(ctx: ToolContext, filter: ListTasksFilter): Promise<TaskSummary[]> {
    const statuses: TaskStatus[] = filter.scope === "queue" ? ["queued"] : filter.scope === "running" ? ["running"] : filter.scope === "all" ? ["queued", "running"] : []
    const tasks: TaskSummary[] = [...this.tasks.values()]
      .filter((task) => task.conversation === ctx.conversation && statuses.includes(task.status) && (!filter.role || task.role === filter.role))
      .map((task) => ({ id: task.id, type: task.role === "planner" ? "planner" : task.type, prompt: task.prompt.slice(0, 100), priority: task.priority, status: task.status, createdAt: task.createdAt }))
    const withTriggers = (filter.scope === "triggers" || filter.scope === "all") && !filter.role
    const triggers: TaskSummary[] = withTriggers
      ? this.scheduler.list(ctx.conversation).map((t) => ({ id: t.id, type: `trigger:${t.kind}`, prompt: t.prompt, priority: 5, status: t.status, createdAt: t.createdAt, nextRunAt: t.nextRunAt, lastOutcome: t.lastOutcome }))
      : []
    return [...tasks, ...triggers]
  }

  /** Cancels a queued task of the caller's conversation; a running one is not touched (seed 002). */
  async cancelTask(ctx: ToolContext, taskId: string): Promise<boolean> {
    if (await this.scheduler.cancel(taskId, ctx.conversation)) return true
    const task = this.tasks.get(taskId)
    if (!task || task.conversation !== ctx.conversation || task.status !== "queued") return false
    await this.finish(task, { status: "cancelled", error: "cancelled before it started" })
    return true
  }

  /** Aborts a task and, through their parent link, every task it committed — also when the
   *  task itself has already ended (a Planner ends before its workers run). */
  async abort(taskId: string, reason = "cancelled"): Promise<boolean> {
    const task = this.tasks.get(taskId)
    if (!task) return false
    let aborted = false
    for (const child of [...this.tasks.values()]) if (child.parentTaskId === taskId) aborted = (await this.abort(child.id, reason)) || aborted
    if (TERMINAL.has(task.status)) return aborted
    if (task.status === "running") this.running.get(task.id)?.abort(new Cancelled(reason))
    else await this.finish(task, { status: "cancelled", error: reason })
    return true
  }

  async reply(ctx: ToolContext, text: string): Promise<void> {
    // A reply in a turn that handles a scheduled report is that report: its delivery is recorded on the firing.
    const firingId = ctx.role === "teller" ? this.turnFirings.get(ctx.conversation)?.values().next().value : undefined
    await this.deps.outbox.add(ctx.conversation, text, `${ctx.sessionId}:${ctx.callId}`, {}, firingId)
  }

  private track(task: TaskRecord): void {
    this.tasks.set(task.id, task)
    this.byOrigin.set(task.origin, task.id)
  }

  private queueOf(task: TaskRecord): TaskQueue {
    return task.role === "planner" ? this.plannerQueue : this.workerQueue
  }

  private dispatch(): void {
    if (this.stopping) return
    const limit = this.deps.config.workerConcurrency
    for (const [queue, role] of [[this.workerQueue, "worker"], [this.plannerQueue, "planner"]] as const) {
      const running = () => [...this.running.keys()].filter((id) => this.tasks.get(id)?.role === role).length
      while (queue.size > 0 && running() < limit) {
        const task = this.tasks.get(queue.shift()!)
        if (task?.status === "queued") this.execute(task)
      }
    }
    this.changed()
  }

  private execute(queued: TaskRecord): void {
    const controller = new AbortController()
    this.running.set(queued.id, controller)
    const seconds = queued.timeout ?? this.deps.config.timeouts[queued.role]
    const timer = setTimeout(() => controller.abort(new TimedOut(`timed out after ${seconds} s`)), seconds * 1000)
    const task: TaskRecord = { ...queued, status: "running", attempts: queued.attempts + 1, startedAt: now() }
    const run = this.deps.store
      .save({ tasks: [task] })
      .then(async () => {
        this.track(task)
        const agent = task.role === "planner" ? this.deps.agents.planner : this.deps.agents.workers.get(task.agent)
        if (!agent) throw new Error(`unknown worker type "${task.agent}"`)
        const session = await this.sessions.open(this.sessionOf(task))
        const takeInput = () => (session.has(task.id) ? [] : [{ eventId: task.id, text: task.prompt, fromUser: true }])
        return this.run(agent, session, controller.signal, task, takeInput, task.id)
      })
      .then(
        (outcome) => this.finish(this.tasks.get(task.id)!, { status: "completed", result: outcome.status === "done" ? outcome.text : "" }),
        (error) => {
          if (this.stopping) return this.deps.store.save({ tasks: [{ ...this.tasks.get(task.id)!, status: "queued", attempts: task.attempts - 1 }] })
          const reason = controller.signal.reason
          const status: TaskStatus = reason instanceof TimedOut ? "timed_out" : reason instanceof Cancelled ? "cancelled" : "failed"
          return this.finish(this.tasks.get(task.id)!, { status, error: controller.signal.aborted ? errorText(reason) : errorText(error) })
        },
      )
      .catch((error) => this.deps.log.error({ err: error, task: task.id }, "could not record the end of a task"))
      .finally(() => {
        clearTimeout(timer)
        this.running.delete(task.id)
        this.sessions.forget(task.sessionId)
        this.dispatch()
      })
    this.trackRun(run)
  }

  /** Records a task's end; a Planner's success commits its staged worker tasks in the same write. */
  private async finish(task: TaskRecord, end: Pick<TaskRecord, "status"> & Partial<Pick<TaskRecord, "result" | "error">>): Promise<void> {
    this.queueOf(task).remove(task.id)
    const committed = end.status === "completed" ? (task.staged ?? []).map((child) => ({ ...child, parentTaskId: task.id, createdAt: now() })) : []
    const update: TaskRecord = { ...task, ...end, endedAt: now(), staged: undefined, children: task.role === "planner" ? committed.map((c) => c.id) : undefined }
    const sessions = committed.filter((child) => !child.continuesSession).map((child) => this.sessionOf(child))
    await this.deps.store.save({ tasks: [update, ...committed], sessions })
    this.track(update)
    for (const session of sessions) this.sessions.adopt(session)
    for (const child of committed) {
      this.track(child)
      if (child.type === "conditional") this.awaitCondition(child)
      else this.workerQueue.push(child.id, child.priority)
    }
    if (task.type === "conditional") this.scheduler.unwait(task.id)
    await this.scheduler.taskEnded(task.id, update.status)
    this.progress.delete(task.id)
    this.events.emit("progress", task.conversation, { taskId: task.id, agent: task.agent, state: "done", tools: [] } satisfies ProgressUpdate)
    this.deps.log.info({ task: task.id, role: task.role, status: update.status, committed: committed.length }, "task ended")
    const head = isBatchHead(update) ? update : this.tasks.get(task.parentTaskId!)
    if (head) await this.reportIfDone(head)
    this.dispatch()
  }

  /** Wakes the Teller once, when a batch has ended: its head (see isBatchHead) and every one-shot
   *  worker task the head committed. A conditional task reports on its own when it ends. */
  private async reportIfDone(head: TaskRecord): Promise<void> {
    if (!isBatchHead(head) || head.reported || !TERMINAL.has(head.status)) return
    const batch = [head, ...(head.children ?? []).map((id) => this.tasks.get(id)!).filter((task) => task?.type !== "conditional")]
    if (batch.some((task) => !task || !TERMINAL.has(task.status))) return
    const event: InboxEvent = {
      id: newId(),
      conversation: head.conversation,
      user: head.user,
      kind: "task_results",
      text: reportText(batch),
      createdAt: now(),
      attempts: 0,
      firingId: head.firingId,
    }
    const update = { ...head, reported: true }
    await this.deps.store.save({ tasks: [update], events: [event] })
    this.track(update)
    this.enqueueEvent(event)
  }

  private sessionOf(task: TaskRecord): SessionRecord {
    return { id: task.sessionId, role: task.role, agent: task.agent, parentId: task.parentSessionId, conversation: task.conversation, user: task.user, createdAt: task.createdAt }
  }

  // ── running an agent ────────────────────────────────────────────────────────

  private run(
    agent: Agent,
    session: Session,
    signal: AbortSignal,
    where: { conversation: string; user: string },
    takeInput: LoopInput["takeInput"],
    taskId?: string,
  ): Promise<LoopOutcome> {
    const role = agent.role as Role
    const { config, rules } = this.deps
    const model = this.deps.model(agent)
    return runLoop({
      model,
      system: agent.prompt,
      environment: () => environment(new Date(), where),
      budgetTokens: config.contextBudgetTokens,
      onUsage: (sample) => this.events.emit("usage", sample),
      compactionSystem: this.deps.agents.compaction.prompt,
      tools: this.toolsOf(agent),
      rules: rules[role],
      log: session,
      context: { role, agent: agent.name, conversation: where.conversation, user: where.user, sessionId: session.info.id, taskId, abort: signal, services: this },
      maxSteps: config.maxSteps[role],
      maxRetries: config.maxRetries,
      usableTokens: config.context.contextTokens - config.context.outputTokens,
      takeInput,
      onTool: taskId ? (summary) => this.onTool(taskId, summary) : undefined,
      // Compaction must not make anything said before it unsearchable.
      onCompacted: role === "teller" ? (summary) => this.memory.recordCompaction(where.user, summary) : undefined,
    })
  }

  /** The tools an agent is offered: what its role's rules do not disable, narrowed by its own
   *  `tools` list. Computed once per agent, so the loop can reuse the SDK's tool objects. */
  private toolsOf(agent: Agent): readonly ToolDefinition[] {
    let tools = this.agentTools.get(agent.name)
    if (!tools) {
      const off = disabled(this.deps.tools.map((tool) => tool.id), this.deps.rules[agent.role as Role])
      if (agent.role === "worker") off.add("delegate")
      tools = this.deps.tools.filter((tool) => !off.has(tool.id) && (!agent.tools || agent.tools.includes(tool.id)))
      this.agentTools.set(agent.name, tools)
    }
    return tools
  }

  private onTool(taskId: string, summary: ToolSummary): void {
    const task = this.tasks.get(taskId)
    if (!task) return
    const tools = (this.progress.get(taskId) ?? []).filter((t) => t.id !== summary.id).concat(summary)
    this.progress.set(taskId, tools)
    this.events.emit("progress", task.conversation, { taskId, agent: task.agent, state: "running", tools } satisfies ProgressUpdate)
  }

  private changed(): void {
    this.events.emit("change")
    this.showActivity()
  }

  /** Tells channels when a conversation starts or stops having work under way ("typing…"). */
  private showActivity(): void {
    const busy = new Set<string>()
    for (const conversation of this.conversations.values()) if (conversation.busy) busy.add(conversation.id)
    for (const id of this.running.keys()) {
      const task = this.tasks.get(id)
      if (task) busy.add(task.conversation)
    }
    for (const id of this.active) if (!busy.has(id)) this.events.emit("activity", id, false)
    for (const id of busy) if (!this.active.has(id)) this.events.emit("activity", id, true)
    this.active = busy
  }
}

/** A task nobody committed starts a batch of its own: a Planner task, a task a command or a
 *  trigger started; and a conditional task, which reports on its own when it ends. */
function isBatchHead(task: TaskRecord): boolean {
  return !task.parentTaskId || task.type === "conditional"
}

function now(): string {
  return new Date().toISOString()
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
