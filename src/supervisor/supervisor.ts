import type { LanguageModel } from "ai"
import type { Logger } from "pino"
import type { Agent, Agents } from "../agent/agents.ts"
import { Access } from "../access/access.ts"
import { Attachments } from "../attachments/attachments.ts"
import { transcriber } from "../attachments/transcribe.ts"
import { channelOf, type Channel } from "../channel/channel.ts"
import { Outbox } from "../channel/outbox.ts"
import { loadCommands } from "../command/commands.ts"
import type { Config } from "../config/config.ts"
import type { ConversationId, Role, UserId, WorkObserver } from "../core/types.ts"
import type { Ruleset } from "../permission/permission.ts"
import { Asking } from "../question/asking.ts"
import { Questions } from "../question/questions.ts"
import { forgetNotes, memoryOverview, memorySnapshot } from "../memory/edit.ts"
import { Scheduler } from "../schedule/scheduler.ts"
import { ControlInbox } from "../control/control-inbox.ts"
import type { Store } from "../store/store.ts"
import type { MemoryService } from "../tool/capabilities.ts"
import type { ToolDefinition } from "../tool/tool.ts"
import { Profiles } from "../user/profiles.ts"
import { Conversations } from "./conversations.ts"
import { InboundGate } from "./gate.ts"
import { recover } from "./recovery.ts"
import { AgentRunner } from "./runner.ts"
import { Schedules } from "./schedules.ts"
import { Sessions } from "./sessions.ts"
import { TaskBoard, type TaskBoardDeps } from "./task-board.ts"
import { sessionOf } from "./task-records.ts"
import type { Capabilities } from "../tool/capabilities.ts"
import { userWorkspaceDir } from "../tool/workspace.ts"
import type { UsageSample } from "../usage/usage.ts"
import { limitedMemory } from "../quota/note-quota.ts"
import { QuotaGuard } from "../quota/quota-guard.ts"

export interface SupervisorDeps {
  config: Config
  store: Store
  /** The running channels by name: the outbox sends through them, and they are told what
   *  work is under way (progress, "typing…"). */
  channels: Map<string, Channel>
  agents: Agents
  /** The model for an agent: its own (front matter) or its role's. */
  model: (agent: Agent) => LanguageModel
  tools: readonly ToolDefinition[]
  rules: Record<Role, Ruleset>
  memory: MemoryService & { recordCompaction(user: UserId, summary: string): Promise<void>; folder(user: UserId): string }
  log: Logger
  /** prompts/commands: commands defined as files. */
  commandsDir?: string
  /** Every model call's tokens (input, cached input, output) with its role, conversation and task. */
  onUsage?: (sample: UsageSample) => void
  /** Turns, duplicate events and trigger firings as they happen (the metrics). */
  observer?: WorkObserver
  /** Where Planner and Worker tasks run: by default here (`runner(capabilities).runTask`); in a
   *  cluster, in whichever process claims them (src/cluster). */
  runTask?: TaskBoardDeps["run"]
  /** Other processes share the store and run tasks (STORE_URL on Postgres; see recovery.ts). */
  shared?: boolean
  /** What the tools' servers ask Workers to know (MCP servers' `instructions`), read per run. */
  workerInstructions?: () => string
}

/**
 * Plain code, no model: owns every queue, timer and state change, through the parts it wires
 * together — the inbound gate, the conversations and their Teller turns, the task board, the
 * schedules, questions, access and the outbox. Each part writes a change to the store before
 * acting on it; `start()` rebuilds them all from the store (recovery.ts).
 */
export class Supervisor {
  readonly outbox: Outbox
  readonly access: Access
  readonly questions: Questions
  readonly scheduler: Scheduler
  readonly schedules: Schedules
  readonly tasks: TaskBoard
  readonly conversations: Conversations
  readonly gate: InboundGate
  private readonly controls: ControlInbox
  readonly profiles: Profiles
  /** Per-user limits decided at run time (messages per minute, the day's model tokens). */
  readonly quota: QuotaGuard
  /** What the tools of a run may use, as this process's parts provide it. */
  readonly capabilities: Capabilities
  private stopping = false
  /** Called whenever work moves, until Steward is idle. */
  private idleWaiters = new Set<() => void>()
  /** Conversations shown as busy ("typing…") to their channel. */
  private active = new Set<ConversationId>()

  constructor(private readonly deps: SupervisorDeps) {
    const { config, store, log } = deps
    const workspaceDir = `${config.dataDir}/workspace`
    const sessions = new Sessions(store)
    this.profiles = new Profiles(store, config.defaultTimeZone, log)
    const timeZoneOf = (user: UserId) => this.profiles.timeZoneOf(user)
    const folderOf = (user: UserId) => deps.memory.folder(user)
    const stopping = () => this.stopping
    const changed = () => this.changed()
    // The parts call each other both ways (a task's tools start tasks, a trigger's run is a
    // task, the outbox reports to the schedules): those calls are callbacks fixed here.
    this.outbox = new Outbox(store, deps.channels, log, { changed: () => this.checkIdle(), settled: (record) => this.schedules.settled(record) }, { maxReplyMessages: config.maxReplyMessages })
    this.questions = new Questions(store, this.outbox, log, (event) => this.conversations.enqueue(event))
    this.access = new Access(config.allowedUsers, store, this.outbox, log)
    this.quota = new QuotaGuard({ quotas: config.quotas, isOwner: (user) => this.access.isOwner(user), usageSince: (since) => store.owner.usageSince(since) })
    this.scheduler = new Scheduler({
      store,
      host: { startRun: (trigger, firing) => this.tasks.startRun(trigger, firing), taskStatus: (id) => this.tasks.taskStatus(id), notify: (trigger, text) => this.schedules.notify(trigger, text) },
      log: log.child({ module: "scheduler" }),
      onFiring: deps.observer && ((status) => deps.observer!.firingReached(status)),
    })
    this.conversations = new Conversations({
      store,
      observer: deps.observer,
      outbox: this.outbox,
      questions: this.questions,
      sessions,
      log,
      runTeller: (session, signal, where, takeInput, hooks) => runner.run({ agent: deps.agents.teller, session, signal, where, takeInput, ...hooks }),
      changed,
      stopping,
      liveText: (conversation, user) => {
        const channel = this.channelOf(conversation)
        if (!config.streamReplies || !channel?.live) return undefined
        return (id) => channel.live!(conversation, id, user)
      },
    })
    this.schedules = new Schedules({ scheduler: this.scheduler, outbox: this.outbox, access: this.access, userOf: (id) => this.conversations.userOf(id), timeZoneOf, quotas: config.quotas, log })
    this.tasks = new TaskBoard({
      config,
      store,
      sessions,
      scheduler: this.scheduler,
      log,
      run: deps.runTask ?? (async (task, signal, onTool) => runner.runTask(task, await sessions.open(sessionOf(task)), signal, onTool)),
      wake: (event) => this.conversations.enqueue(event),
      tellerSessionId: (conversation, user) => this.conversations.tellerSessionId(conversation, user),
      progress: (conversation, update) => this.channelOf(conversation)?.progress?.(conversation, update),
      changed,
      stopping,
      timeZoneOf,
      shared: deps.shared,
    })
    this.capabilities = {
      tasks: this.tasks,
      questions: new Asking(this.questions),
      schedules: this.schedules,
      replies: this.conversations,
      memory: limitedMemory(deps.memory, this.quota, folderOf),
      history: store.history,
      profiles: this.profiles,
      notes: { forget: (user, request) => forgetNotes(folderOf(user), request) },
      workspaceDir,
      incidents: log,
    }
    const runner = this.runner(this.capabilities)
    const workerTypes = new Set(deps.agents.workers.keys())
    const fileCommands = deps.commandsDir ? loadCommands(deps.commandsDir, new Set(["teller", "planner", ...workerTypes])) : []
    this.gate = new InboundGate({
      store,
      observer: deps.observer,
      access: this.access,
      questions: this.questions,
      conversations: this.conversations,
      board: this.tasks,
      scheduler: this.scheduler,
      outbox: this.outbox,
      quota: this.quota,
      attachments: new Attachments({ workspaceDir, uploadsPerDay: (user) => (this.quota.limited(user) ? config.quotas.uploadsPerDay : undefined), quotaBytes: config.workspace.quotaBytes, maxBytes: config.attachments.maxBytes, vision: config.attachments.vision, transcribe: transcriber(config), log }),
      profiles: this.profiles,
      memoryOverview: (user) => memoryOverview(folderOf(user)),
      log,
      fileCommands,
      workspaceOf: (user) => userWorkspaceDir(workspaceDir, user),
      workerTypes,
    })
    this.controls = new ControlInbox(store, {
      pauseTrigger: async (id, paused) => {
        const changed = await (paused ? this.scheduler.pauseTrigger(id) : this.scheduler.resumeTrigger(id))
        return typeof changed === "string" ? { error: changed } : { done: `trigger ${id} ${paused ? "paused" : "resumed"}` }
      },
      removeTrigger: async (id) => ((await this.scheduler.cancel(id)) ? { done: `trigger ${id} removed` } : { error: `no active trigger ${id}` }),
      revokeUser: (user) => this.access.revoke(user),
      cancelTask: async (id) => ((await this.tasks.abort(id, "cancelled by the owner")) ? { done: `task ${id} cancelled` } : { error: `task ${id} is not queued or running` }),
    }, log)
  }

  /** An agent runner whose tools use `capabilities` (a cluster's task host passes ones that
   *  reach the leader process). */
  runner(capabilities: Capabilities): AgentRunner {
    const { deps } = this
    return new AgentRunner({
      config: deps.config,
      agents: deps.agents,
      model: deps.model,
      tools: deps.tools,
      rules: deps.rules,
      onUsage: (sample) => {
        deps.onUsage?.(sample)
        this.quota.usageRecorded(sample)
      },
      mayRun: (user) => this.quota.tokenRefusal(user),
      workerInstructions: deps.workerInstructions,
      capabilities,
      timeZoneOf: (user) => this.profiles.timeZoneOf(user),
      memorySnapshot: (user) => memorySnapshot(deps.memory.folder(user)),
      recordCompaction: (user, summary) => deps.memory.recordCompaction(user, summary),
    })
  }

  /** Rebuilds every part from the store and starts the queues and turns. */
  async start(): Promise<void> {
    const { store, log } = this.deps
    const { outbox, conversations, access, questions, scheduler } = this
    await this.profiles.load()
    await recover({ store, outbox, board: this.tasks, conversations, access, questions, scheduler, log, shared: this.deps.shared ?? false })
    // What the owner asked while Steward was down applies now, before any message comes in.
    await this.controls.start()
  }

  /** Aborts running work and waits for it to wind down, then for sends under way. Tasks go back
   *  to the queue without counting the attempt — a shutdown is not a crash; turns are replayed
   *  from the log. */
  async stop(): Promise<void> {
    this.stopping = true
    this.controls.stop()
    this.questions.stop()
    await this.scheduler.stop()
    await Promise.all([this.tasks.stop(), this.conversations.stop()])
    await this.outbox.stop()
  }

  /** Resolves once nothing is queued, running or waiting to be sent. */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.busy) return
        this.idleWaiters.delete(check)
        resolve()
      }
      this.idleWaiters.add(check)
      check()
    })
  }

  get busy(): boolean {
    // Events held behind an open question wait for the user, not for Steward.
    return this.tasks.busy || this.conversations.busy || this.outbox.busy
  }

  private changed(): void {
    this.checkIdle()
    this.showActivity()
  }

  private checkIdle(): void {
    for (const check of [...this.idleWaiters]) check()
  }

  /** Tells channels when a conversation starts or stops having work under way ("typing…"). */
  private showActivity(): void {
    const busy = new Set([...this.conversations.inTurn(), ...this.tasks.runningIn()])
    for (const id of this.active) if (!busy.has(id)) this.channelOf(id)?.activity?.(id, false)
    for (const id of busy) if (!this.active.has(id)) this.channelOf(id)?.activity?.(id, true)
    this.active = busy
  }

  private channelOf(conversation: ConversationId): Channel | undefined {
    return this.deps.channels.get(channelOf(conversation))
  }
}
