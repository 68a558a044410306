import { APICallError, generateText, jsonSchema, tool, zodSchema, type LanguageModel, type LanguageModelUsage, type ModelMessage, type Tool, type ToolCallPart, type ToolResultPart, type ToolSet } from "ai"
import { disabled, evaluate, type Ruleset } from "../permission/permission.ts"
import type { MessageRecord } from "../store/records.ts"
import type { ImageRef, ToolSummary } from "../core/types.ts"
import { ToolError, type ToolContext, type ToolDefinition } from "../tool/tool.ts"
import { AWAIT_ANSWER } from "../tool/capabilities.ts"
import type { UsageSample } from "../usage/usage.ts"
import { CLEAR_ALL_TOOL_OUTPUT, DEFAULT_PRUNE, imagePart, pruneLimits, toModelMessages, withImages, type PruneLimits } from "./context.ts"
import { buildRequest, estimatePrompt, modelName } from "./request.ts"
import { textOf, toolCalls } from "./messages.ts"
import { stepEndsRun } from "./run-end.ts"

export { textOf, toolCalls }

/** OpenCode's threshold: the third identical call in a row is a loop, not persistence. */
export const DOOM_LOOP_THRESHOLD = 3

const COMPACTION_REQUEST =
  "Provide a detailed summary of our conversation above, for continuing it without the earlier messages: what was asked, what was decided and done, what is pending."
const CONTINUE_AFTER_COMPACTION = "Continue if you have next steps."
const UNSUMMARISED = "(The earlier conversation could not be summarised.)"
/** A tool call's arguments over this many characters (as JSON) are refused with a tool error:
 *  larger input is a model gone astray (or a file's worth of text that belongs in a file). */
export const MAX_TOOL_INPUT_CHARS = 256_000
/** Input that arrives mid-run extends the step budget by half the role's steps per message, up
 *  to this many times the role's steps; beyond that the run stops taking input, which waits for
 *  the next run. */
const MAX_BUDGET_FACTOR = 5
const MAX_STEPS_REACHED =
  "You have used all the steps allowed for this run. Do not call tools. Respond now with text only: what was done, and what remains."

/** The messages of one session, persisted before they are acted on. */
export interface SessionLog {
  readonly records: readonly MessageRecord[]
  append(...entries: Array<Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId">>>): Promise<void>
}

export interface LoopInput {
  model: LanguageModel
  /** The role's instructions: the same bytes on every call, so a provider can cache them. */
  system: string
  /** Long-lived context after the instructions (a memory snapshot, a worker list): it may change
   *  now and then, which costs the cache from this point once. */
  longLived?: string
  compactionSystem: string
  /** Tools offered to the model (those the role's rules do not disable). A family's stand-in
   *  (toolFamily) is replaced by its members of the moment when the run starts. */
  tools: readonly ToolDefinition[]
  rules: Ruleset
  log: SessionLog
  context: Omit<ToolContext, "callId">
  maxSteps: number
  maxRetries: number
  /** Context tokens a step may use before the session is compacted (the model's window). */
  usableTokens: number
  /** The most a prompt may hold (CONTEXT_BUDGET_TOKENS): old output is pruned as the session
   *  fills it, and the session is compacted before a prompt would pass it. */
  budgetTokens?: number
  /** Facts that change with every message (the time): put before each new input, in its own
   *  message written with it, so a replay sends the same bytes and the system prompt stays put. */
  environment?: () => string
  /** Input that arrived for this session while it runs; drained before every step. */
  takeInput?: () => Array<{ eventId: string; text: string; fromUser: boolean; images?: ImageRef[] }>
  onTool?: (summary: ToolSummary) => void
  onCompacted?: (summary: string) => Promise<void>
  /** Every model call's token usage. */
  onUsage?: (sample: UsageSample) => void
}

export type LoopOutcome =
  | { status: "done"; text: string }
  /** A tool awaits an answer from outside the run (ask_user): the run stops at that call. */
  | { status: "waiting"; call: ToolCallPart }

/**
 * The agent loop shared by every role (seed 004): one model step at a time, each step's
 * messages written before its tool calls run, so a run interrupted anywhere resumes from
 * the log — calls already answered are not repeated, unanswered ones run once more and
 * tools make that safe with their idempotency key.
 */
export async function runLoop(loopInput: LoopInput): Promise<LoopOutcome> {
  const input = { ...loopInput, tools: withFamilies(loopInput.tools, loopInput.rules) }
  const { log, context } = input
  const offered = toolSet(input.tools)
  // Each message handed in mid-run brings steps of its own, so a burst of messages during a
  // turn does not use up the steps the first one needed: every one of them gets an answer.
  const perMessage = Math.max(2, Math.ceil(input.maxSteps / 2))
  const ceiling = input.maxSteps * MAX_BUDGET_FACTOR
  let budget = input.maxSteps
  for (let step = 0; ; step++) {
    context.abort.throwIfAborted()
    // The calls of the first step are in the log from before this run: they may have run.
    const waiting = await answerPendingCalls(input, step > 0)
    if (waiting) return { status: "waiting", call: waiting }

    // Near the ceiling, input is left for the next run rather than taken without steps to answer it.
    const injected = step === 0 || budget + perMessage <= ceiling ? (input.takeInput?.() ?? []) : []
    if (injected.length > 0) {
      const facts = input.environment ? [{ message: userMessage(input.environment()) }] : []
      await log.append(...facts, ...injected.map(({ eventId, text, fromUser, images }) => ({ eventId, message: userMessage(step > 0 ? reminder(text, fromUser) : text, images) })))
      // The first message of the run has the role's steps; every other one brings its own.
      budget = Math.min(ceiling, budget + perMessage * (step === 0 ? injected.length - 1 : injected.length))
    }
    const ended = runEnded(input)
    if (ended) return { status: "done", text: textOf(ended) }

    if (overflowed(log.records, input.usableTokens) || overBudget(input, offered)) await compact(input)
    const lastStep = step >= budget - 1
    if (lastStep) await log.append({ message: userMessage(MAX_STEPS_REACHED) })
    const result = await generateStep(input, offered, lastStep)
    const [assistant, ...rest] = result.response.messages
    if (!assistant) return { status: "done", text: "" }
    await log.append(
      { message: assistant, usage: { input: result.usage.inputTokens ?? 0, output: result.usage.outputTokens ?? 0 } },
      // Tool errors the SDK produced for malformed calls (bad JSON, schema mismatch, unknown tool).
      ...rest.map((message) => ({ message })),
    )
    // The step budget is a hard bound: a model that still calls tools on its last step is not
    // given another one.
    if (lastStep) return { status: "done", text: textOf(assistant) }
  }
}

/**
 * The tools of this run: each family's stand-in gives way to the members it has now (an MCP
 * server's tools while it runs), less those a blanket deny rule hides — the rule a single
 * tool meets in the Supervisor, met here because members are only known per run.
 */
function withFamilies(tools: readonly ToolDefinition[], rules: Ruleset): readonly ToolDefinition[] {
  if (!tools.some((def) => def.members)) return tools
  return tools.flatMap((def) => {
    if (!def.members) return [def]
    const members = def.members()
    const off = disabled(members.map((member) => member.id), rules)
    return members.filter((member) => !off.has(member.id))
  })
}

/**
 * The assistant message that ended the run, if nothing came after it but its own tool results:
 * a final answer in text, or a step whose calls all end the run (see stepEndsRun). Read from
 * the log alone, so a run resumed after a crash decides the same and calls no model either.
 */
function runEnded(input: LoopInput): ModelMessage | undefined {
  const records = input.log.records
  const index = records.findLastIndex((record) => record.message.role !== "tool")
  const last = records[index]?.message
  if (last?.role !== "assistant") return undefined
  if (index === records.length - 1) return last
  return stepEndsRun(input.context.role, last, records.slice(index + 1).map((record) => record.message)) ? last : undefined
}

const sdkTools = new WeakMap<ToolDefinition, Tool>()

/** Tools are offered without execute: the SDK validates the calls, this loop runs them (see
 *  answerPendingCalls). Each tool's SDK form is built once, with the schema wrapped by
 *  zodSchema() (or jsonSchema(), for a tool that brought its own): the SDK caches the JSON
 *  Schema on that wrapper, while a bare zod schema is converted on every call — that
 *  conversion was the largest share of a Teller turn. */
function toolSet(tools: readonly ToolDefinition[]): ToolSet {
  return Object.fromEntries(
    tools.map((def) => {
      let sdk = sdkTools.get(def)
      if (!sdk) {
        sdk = tool({ description: def.description, inputSchema: def.inputSchema ? jsonSchema(def.inputSchema) : zodSchema(def.parameters as never) })
        sdkTools.set(def, sdk)
      }
      return [def.id, sdk]
    }),
  )
}

/** One model call. A provider that rejects the request as too long gets one compaction — with
 *  every tool output cleared, since the history itself may be what does not fit — and a retry. */
async function generateStep(input: LoopInput, offered: ToolSet, lastStep: boolean) {
  const call = async () => {
    const request = requestOf(input)
    const result = await generateText({
      model: input.model,
      ...request,
      // Images are read from the workspace for this call only (budget estimates count their references).
      messages: await withImages(request.messages),
      tools: lastStep ? undefined : offered,
      maxRetries: input.maxRetries,
      abortSignal: input.context.abort,
    })
    reportUsage(input, input.context.role, result.usage)
    return result
  }
  try {
    return await call()
  } catch (error) {
    if (!isContextOverflow(error)) throw error
    await compact(input, CLEAR_ALL_TOOL_OUTPUT)
    // The summary hides everything before it, the last-step instruction included.
    if (lastStep) await input.log.append({ message: userMessage(MAX_STEPS_REACHED) })
    return await call()
  }
}

function requestOf(input: LoopInput, limits = limitsOf(input)) {
  return buildRequest(input.system, input.longLived, toModelMessages(input.log.records, limits), input.context.conversation)
}

function limitsOf(input: LoopInput): PruneLimits {
  return input.budgetTokens === undefined ? DEFAULT_PRUNE : pruneLimits(input.budgetTokens)
}

/** Compaction starts when the estimated prompt passes this share of the budget. The estimate
 *  (characters / 4) undercounts JSON and code, which tokenizers split finer: the rest of the
 *  budget is that margin, so that the prompt a provider counts stays within the budget. */
export const COMPACT_AT_SHARE = 0.75

/** True when the prompt about to be sent, pruned, has outgrown the budget — unless nothing but
 *  a summary is left to compact (a compaction cannot shrink the history any further). */
function overBudget(input: LoopInput, offered: ToolSet): boolean {
  if (input.budgetTokens === undefined) return false
  const records = input.log.records
  const summary = records.findLastIndex((record) => record.kind === "summary")
  // A summary is followed by the request to continue: only what comes after those two counts.
  const compactable = summary < 0 ? records.length > 0 : records.length - summary > 2
  return compactable && estimatePrompt(requestOf(input), offered) > input.budgetTokens * COMPACT_AT_SHARE
}

function reportUsage(input: LoopInput, role: UsageSample["role"], usage: LanguageModelUsage): void {
  const { context } = input
  input.onUsage?.({
    at: new Date().toISOString(),
    role,
    agent: context.agent,
    conversation: context.conversation,
    sessionId: context.sessionId,
    user: context.user,
    taskId: context.taskId,
    model: modelName(input.model),
    input: usage.inputTokens ?? 0,
    cachedInput: usage.inputTokenDetails?.cacheReadTokens ?? 0,
    output: usage.outputTokens ?? 0,
  })
}

/** Runs the tool calls of the newest assistant message that have no result yet, in order. */
async function answerPendingCalls(input: LoopInput, fresh: boolean): Promise<ToolCallPart | undefined> {
  const { log } = input
  const index = log.records.findLastIndex((record) => record.message.role === "assistant")
  if (index < 0) return undefined
  const answered = new Set(
    log.records.slice(index + 1).flatMap((record) => (record.message.role === "tool" ? record.message.content.flatMap((part) => (part.type === "tool-result" ? [part.toolCallId] : [])) : [])),
  )
  const calls = toolCalls(log.records[index]!.message).filter((call) => !answered.has(call.toolCallId))
  for (const call of calls) {
    const def = input.tools.find((candidate) => candidate.id === call.toolName)
    const output = await execute(input, def, call, fresh)
    if (output.ok && output.value === AWAIT_ANSWER) return call
    await log.append({ message: { role: "tool", content: [toolResult(call, output)] } })
  }
  return undefined
}

type Output = { ok: true; value: unknown } | { ok: false; error: string }

async function execute(input: LoopInput, def: ToolDefinition | undefined, call: ToolCallPart, fresh: boolean): Promise<Output> {
  if (!def) return { ok: false, error: `Unknown tool "${call.toolName}". Available tools: ${input.tools.map((t) => t.id).join(", ")}.` }
  const size = JSON.stringify(call.input ?? null).length
  if (size > MAX_TOOL_INPUT_CHARS) {
    return { ok: false, error: `Input too large for tool ${def.id}: ${size} characters, the limit is ${MAX_TOOL_INPUT_CHARS}. Send less at once (split it over several calls, or write long text to a file).` }
  }
  const parsed = def.parameters.safeParse(call.input)
  if (!parsed.success) return { ok: false, error: `Invalid input for tool ${def.id}: ${parsed.error.message}` }
  if (isDoomLoop(input.log.records, call)) {
    return {
      ok: false,
      error: `Refused: this is the ${DOOM_LOOP_THRESHOLD}rd call in a row of ${def.id} with the same input. It will not give a different result; change the input or take another approach.`,
    }
  }
  const pattern = def.pattern?.(parsed.data, input.context.role) ?? "*"
  const rule = evaluate(def.id, pattern, input.rules)
  if (rule.action === "deny") return { ok: false, error: `Permission denied: ${def.id} may not be used on "${pattern}".` }
  if (rule.action === "ask") {
    const approved = await input.context.questions.approve({ ...input.context, callId: call.toolCallId }, def.id, pattern)
    if (!approved) return { ok: false, error: `Permission denied by the user: ${def.id} may not be used on "${pattern}".` }
  }
  const title = pattern === "*" ? def.id : `${def.id} ${pattern}`.slice(0, 80)
  input.onTool?.({ id: call.toolCallId, tool: def.id, status: "running", title })
  try {
    const value = await def.execute!(parsed.data, { ...input.context, callId: call.toolCallId, fresh: fresh || undefined })
    input.onTool?.({ id: call.toolCallId, tool: def.id, status: "completed", title })
    return { ok: true, value }
  } catch (error) {
    // An abort belongs to the run, not to the tool: let it end the run.
    if (input.context.abort.aborted) throw error
    input.onTool?.({ id: call.toolCallId, tool: def.id, status: "error", title })
    const message = error instanceof Error ? error.message : String(error)
    return { ok: false, error: error instanceof ToolError ? message : `Tool ${def.id} failed: ${message}` }
  }
}

/** The third consecutive call of the same tool with the same input since the last user
 *  message: across steps, but not across turns — a user who asks the same thing three
 *  times is not a loop. */
function isDoomLoop(records: readonly MessageRecord[], call: ToolCallPart): boolean {
  const since = records.findLastIndex((record) => record.message.role === "user")
  const calls = records.slice(since + 1).flatMap((record) => toolCalls(record.message))
  const at = calls.findIndex((candidate) => candidate.toolCallId === call.toolCallId)
  const recent = calls.slice(Math.max(0, at - (DOOM_LOOP_THRESHOLD - 1)), at)
  const key = JSON.stringify(call.input)
  return recent.length === DOOM_LOOP_THRESHOLD - 1 && recent.every((c) => c.toolName === call.toolName && JSON.stringify(c.input) === key)
}

/** True when the newest step since the last compaction used more context than allowed. */
function overflowed(records: readonly MessageRecord[], usable: number): boolean {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!
    if (record.kind === "summary") return false
    if (record.usage) return record.usage.input + record.usage.output > usable
  }
  return false
}

/** Replaces the history sent to the model with a summary written by a tool-less call. */
async function compact(input: LoopInput, limits?: PruneLimits): Promise<void> {
  const result = await generateText({
    model: input.model,
    system: input.compactionSystem,
    messages: [...(await withImages(toModelMessages(input.log.records, limits ?? limitsOf(input)))), userMessage(COMPACTION_REQUEST)],
    maxRetries: input.maxRetries,
    abortSignal: input.context.abort,
  })
  reportUsage(input, "compaction", result.usage)
  const summary = result.text.trim()
  // The summary reaches memory before the log hides what it summarises: a crash in between
  // replays the turn, which compacts again — at worst a summary twice, never none.
  if (summary) await input.onCompacted?.(summary)
  await input.log.append({ message: { role: "assistant", content: summary || UNSUMMARISED }, kind: "summary" }, { message: userMessage(CONTINUE_AFTER_COMPACTION) })
}

function isContextOverflow(error: unknown): boolean {
  return (
    APICallError.isInstance(error) &&
    error.statusCode === 400 &&
    /context|too long|too many tokens|maximum.*tokens/i.test(`${error.message} ${error.responseBody ?? ""}`)
  )
}

/** Seed 004 §3.4: input that arrives mid-run is wrapped so the model treats it as new. */
export function reminder(text: string, fromUser: boolean): string {
  const intro = fromUser ? "The user sent the following message:" : "This arrived while you were working:"
  return ["<system-reminder>", intro, text, "", "Please address this message and continue with your tasks.", "</system-reminder>"].join("\n")
}

/** Images are kept as references to their workspace files; `withImages` reads them for each call. */
function userMessage(text: string, images?: ImageRef[]): ModelMessage {
  if (!images?.length) return { role: "user", content: text }
  return { role: "user", content: [{ type: "text", text }, ...images.map(imagePart)] }
}

function toolResult(call: ToolCallPart, output: Output): ToolResultPart {
  return {
    type: "tool-result",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: output.ok ? { type: "json", value: (output.value ?? null) as never } : { type: "error-text", value: output.error },
  }
}
