import type { LanguageModel } from "ai"
import { environment, type Agent, type Agents } from "../agent/agents.ts"
import { runLoop, type LoopInput, type LoopOutcome } from "../agent/loop.ts"
import type { Config } from "../config/config.ts"
import type { ConversationId, Role, TaskRecord, ToolSummary, UserId } from "../core/types.ts"
import { disabled, type Ruleset } from "../permission/permission.ts"
import { withheldTools } from "../permission/roles.ts"
import type { Capabilities } from "../tool/capabilities.ts"
import { ToolError, type ToolDefinition } from "../tool/tool.ts"
import { tainted } from "../trust/taint.ts"
import type { UsageSample } from "../usage/usage.ts"
import { taskReport } from "./report.ts"
import type { Session } from "./sessions.ts"

export interface AgentRunnerDeps {
  config: Config
  agents: Agents
  /** The model for an agent: its own (front matter) or its role's. */
  model: (agent: Agent) => LanguageModel
  tools: readonly ToolDefinition[]
  rules: Record<Role, Ruleset>
  /** What the tools of every run may use. */
  capabilities: Capabilities
  /** The user's IANA zone, for the date the agents see. */
  timeZoneOf: (user: UserId) => string
  /** The user's memory.md for the Teller's and Planner's system prompt ("" when none). */
  memorySnapshot: (user: UserId) => Promise<string>
  /** Compaction must not make anything said before it unsearchable. */
  recordCompaction: (user: UserId, summary: string) => Promise<void>
  /** Every model call's tokens, for the usage record. */
  onUsage?: (sample: UsageSample) => void
  /** Why a run for this user may not make its next model call (their day's model tokens are
   *  used up), if so. */
  mayRun?: (user: UserId) => Promise<string | undefined>
  /** Added to a Worker's system prompt (MCP servers' `instructions`; "" when none). */
  workerInstructions?: () => string
}

/** One run of an agent over a session. */
export interface Run {
  agent: Agent
  session: Session
  signal: AbortSignal
  /** Whom the run acts for: their conversation, their memory, their rights. */
  where: { conversation: ConversationId; user: UserId }
  takeInput: LoopInput["takeInput"]
  /** The task the run executes (Planner and Worker runs). */
  taskId?: string
  /** When that task was asked for (Caller.askedAt). */
  askedAt?: string
  onTool?: (summary: ToolSummary) => void
  onAnswer?: LoopInput["onAnswer"]
  answers?: LoopInput["answers"]
}

/** A model call refused: the user's quota is used up. Its message is for the user. Thrown from a
 *  tool's own model call (MCP sampling) it is that tool's error, which the model reads; before a
 *  step it ends the run, and the user is told (conversations.ts, task-board.ts). */
export class QuotaReached extends ToolError {
  override name = "QuotaReached"
}

/** Runs an agent through the shared agent loop with its role's tools, rules and limits. */
export class AgentRunner {
  private agentTools = new Map<string, readonly ToolDefinition[]>()

  constructor(private readonly deps: AgentRunnerDeps) {}

  async run({ agent, session, signal, where, takeInput, taskId, askedAt, onTool, onAnswer, answers }: Run): Promise<LoopOutcome> {
    const role = agent.role as Role
    const { config, rules } = this.deps
    // Checked before every model call, not once per run: one long run cannot overspend the day.
    const beforeCall = async () => {
      const refusal = await this.deps.mayRun?.(where.user)
      if (refusal) throw new QuotaReached(refusal)
    }
    await beforeCall()
    // The stable part first: the role's instructions, then what the user asked to be remembered.
    const memory = role === "worker" ? "" : await this.deps.memorySnapshot(where.user)
    // A server's instructions change only when it reconnects, so the prompt stays cacheable.
    const instructions = role === "worker" ? (this.deps.workerInstructions?.() ?? "") : ""
    return runLoop({
      model: this.deps.model(agent),
      system: instructions ? `${agent.prompt}\n\n${instructions}` : agent.prompt,
      vision: config.attachments.vision,
      // The user's memory.md: long-lived context after the instructions, changed only with the note.
      longLived: memory || undefined,
      environment: () => environment(new Date(), where, this.deps.timeZoneOf(where.user)),
      budgetTokens: config.contextBudgetTokens,
      onUsage: this.deps.onUsage,
      beforeCall,
      compactionSystem: this.deps.agents.compaction.prompt,
      tools: this.toolsOf(agent),
      rules: rules[role],
      log: session,
      context: { role, agent: agent.name, conversation: where.conversation, user: where.user, sessionId: session.info.id, taskId, askedAt, abort: signal, ...this.deps.capabilities },
      maxSteps: config.maxSteps[role],
      maxRetries: config.maxRetries,
      usableTokens: config.context.contextTokens - config.context.outputTokens,
      takeInput,
      onTool,
      onAnswer,
      answers,
      onCompacted: role === "teller" ? (summary) => this.deps.recordCompaction(where.user, summary) : undefined,
    })
  }

  /** Runs a task: the Planner, or its worker type, given the task's prompt once. */
  async runTask(task: TaskRecord, session: Session, signal: AbortSignal, onTool: (summary: ToolSummary) => void): Promise<LoopOutcome> {
    const agent = task.role === "planner" ? this.deps.agents.planner : this.deps.agents.workers.get(task.agent)
    if (!agent) throw new Error(`unknown worker type "${task.agent}"`)
    const takeInput = () => (session.has(task.id) ? [] : [{ eventId: task.id, text: task.prompt, fromUser: true }])
    const outcome = await this.run({ agent, session, signal, where: task, takeInput, taskId: task.id, askedAt: task.createdAt, onTool })
    // The report carries its run's taint in its own text, so whichever process reads it knows.
    return outcome.status === "done" ? { ...outcome, text: taskReport(task.agent, outcome.text, tainted(session.records)) } : outcome
  }

  /** The tools an agent is offered: what its role's rules do not disable and the role table
   *  does not withhold, narrowed by its own `tools` list. Computed once per agent, so the loop
   *  can reuse the SDK's tool objects. */
  private toolsOf(agent: Agent): readonly ToolDefinition[] {
    let tools = this.agentTools.get(agent.name)
    if (!tools) {
      const role = agent.role as Role
      const off = disabled(this.deps.tools.map((tool) => tool.id), this.deps.rules[role])
      for (const id of withheldTools(role)) off.add(id)
      tools = this.deps.tools.filter((tool) => !off.has(tool.id) && (!agent.tools || agent.tools.includes(tool.id)))
      this.agentTools.set(agent.name, tools)
    }
    return tools
  }
}
