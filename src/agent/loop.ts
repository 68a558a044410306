import { APICallError, generateText, jsonSchema, tool, zodSchema, type LanguageModel, type LanguageModelUsage, type ModelMessage, type Tool, type ToolCallPart, type ToolSet } from "ai"
import { disabled, evaluate, type Ruleset } from "../permission/permission.ts"
import type { MessageRecord } from "../store/records.ts"
import type { ImageRef, ToolSummary } from "../core/types.ts"
import { ToolError, type ToolContext, type ToolDefinition } from "../tool/tool.ts"
import { AWAIT_ANSWER } from "../tool/capabilities.ts"
import type { UsageSample } from "../usage/usage.ts"
import { CLEAR_ALL_TOOL_OUTPUT, DEFAULT_PRUNE, pruneLimits, toModelMessages, withImages, type PruneLimits } from "./context.ts"
import { internalError } from "../core/errors.ts"
import { authoredBy, compactionViewer } from "./author-view.ts"
import { buildRequest, estimatePrompt, modelName } from "./request.ts"
import { reminder, textOf, toolCalls, userMessage } from "./messages.ts"
import { stepEndsRun } from "./run-end.ts"
import { TAINTED, tainted, taintedRule } from "../trust/taint.ts"
import { compact, fixedAfterSummary } from "./compaction.ts"
import { streamStep, type AnswerStream } from "./stream-step.ts"
import type { SessionLog } from "./session-log.ts"
import { callContext } from "./call-context.ts"
import { nextTurn } from "./turnstile.ts"
import { sourceOf, toolResult, type Output } from "./tool-result.ts"

export { textOf, toolCalls }
export { reminder }

/** OpenCode's threshold: the third identical call in a row is a loop, not persistence. */
export const DOOM_LOOP_THRESHOLD = 3

/** A tool call's arguments over this many characters (as JSON) are refused with a tool error:
 *  larger input is a model gone astray (or a file's worth of text that belongs in a file). */
export const MAX_TOOL_INPUT_CHARS = 256_000
/** Input that arrives mid-run extends the step budget by half the role's steps per message, up
 *  to this many times the role's steps; beyond that the run stops taking input, which waits for
 *  the next run. */
const MAX_BUDGET_FACTOR = 5
const MAX_STEPS_REACHED =
  "You have used all the steps allowed for this run. Do not call tools. Respond now with text only: what was done, and what remains."

export type { SessionLog }

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
  /** A step's text said to the user (a step without tool calls), with the id of its record —
   *  every one of them, not only the run's last: a run handed a new message after answering
   *  in text goes on to answer that one too. */
  onAnswer?: (text: string, recordId: string) => Promise<void>
  /** When set, each step streams (`stream: true`) and shows here the text meant for the user as
   *  it is generated; the step's result is the same as without. */
  answers?: AnswerStream
  /** Every model call's token usage. */
  onUsage?: (sample: UsageSample) => void
  /** Before every model call (compactions too): throws when the run may not make it (a quota). */
  beforeCall?: () => Promise<void>
  /** VISION: images a tool returns (`images` beside its result) reach the model as images. */
  vision?: boolean
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
  // Every record the run writes names the person it acts for (author-view.ts).
  const input = { ...loopInput, tools: withFamilies(loopInput.tools, loopInput.rules), log: authoredBy(loopInput.log, loopInput.context.user) }
  const { log, context } = input
  let offered = toolSet(input.tools)
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
      await log.append(...facts, ...injected.map(({ eventId, text, fromUser, images }) => ({ eventId, fromUser, message: userMessage(step > 0 ? reminder(text, fromUser) : text, images) })))
      // The first message of the run has the role's steps; every other one brings its own.
      budget = Math.min(ceiling, budget + perMessage * (step === 0 ? injected.length - 1 : injected.length))
    }
    const ended = runEnded(input)
    if (ended) return { status: "done", text: textOf(ended) }
    // A family's members may have changed since the last step (an MCP server's tools/list_changed):
    // each step offers the set of the moment.
    if (step > 0 && loopInput.tools.some((def) => def.members)) {
      await Promise.all(loopInput.tools.map((def) => def.settled?.()))
      input.tools = withFamilies(loopInput.tools, loopInput.rules)
      offered = toolSet(input.tools)
    }

    if (overflowed(log.records, input.usableTokens) || overBudget(input, offered)) await compactLog(input)
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
    // A step of text alone is an answer, whatever comes after it: it is handed on now, before
    // input that arrived meanwhile gets the next step (and perhaps a reply of its own).
    const answer = textOf(assistant)
    if (answer && toolCalls(assistant).length === 0) await input.onAnswer?.(answer, log.records.findLast((record) => record.message === assistant)!.id)
    // The step budget is a hard bound: a model that still calls tools on its last step is not
    // given another one.
    if (lastStep) return { status: "done", text: textOf(assistant) }
  }
}

/**
 * The tools of a step: each family's stand-in gives way to the members it has now (an MCP
 * server's tools while it runs), less those a blanket deny rule hides — the rule a single
 * tool meets in the Supervisor, met here because members are only known per step.
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
  const step = async () => {
    await nextTurn()
    await input.beforeCall?.()
    const request = requestOf(input)
    const call = {
      model: input.model,
      ...request,
      // Images are read from the workspace for this call only (budget estimates count their references).
      messages: await withImages(request.messages),
      tools: lastStep ? undefined : offered,
      maxRetries: input.maxRetries,
      abortSignal: input.context.abort,
    }
    // The same request either way: streaming changes how the answer arrives, not the cache layout.
    const result = input.answers ? await streamStep(call, input.answers) : await generateText(call)
    reportUsage(input, input.context.role, result.usage)
    return result
  }
  try {
    return await step()
  } catch (error) {
    if (!isContextOverflow(error)) throw error
    await compactLog(input, CLEAR_ALL_TOOL_OUTPUT)
    // The summary hides everything before it, the last-step instruction included.
    if (lastStep) await input.log.append({ message: userMessage(MAX_STEPS_REACHED) })
    return await step()
  }
}

function requestOf(input: LoopInput, limits = limitsOf(input)) {
  return buildRequest(input.system, input.longLived, toModelMessages(input.log.records, limits, input.context.user), input.context.conversation)
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
  // A summary is followed by the messages it kept and the request to continue: only what comes
  // after those counts.
  const compactable = summary < 0 ? records.length > 0 : records.length - summary > fixedAfterSummary(records, summary)
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
  const images: ImageRef[] = []
  for (const call of calls) {
    const def = input.tools.find((candidate) => candidate.id === call.toolName)
    const output = await execute(input, def, call, fresh)
    if (output.ok && output.value === AWAIT_ANSWER) return call
    await log.append({ message: { role: "tool", content: [toolResult(call, withoutImages(output, images), def?.untrustedOutput && sourceOf(def, call, input.context.role))] } })
  }
  // A tool result cannot hold an image for every provider; a message after the results can.
  if (input.vision && images.length > 0) await log.append({ message: userMessage(TOOL_IMAGES, images) })
  return undefined
}

const TOOL_IMAGES = "The images the tool calls above returned:"

/** A result's `images` (workspace files) are taken out of what the log keeps as its value; the
 *  result names them in its text. */
function withoutImages(output: Output, images: ImageRef[]): Output {
  if (!output.ok || typeof output.value !== "object" || output.value === null || !("images" in output.value)) return output
  const { images: found, ...rest } = output.value as { images?: ImageRef[] }
  images.push(...(found ?? []))
  return { ok: true, value: rest }
}

/** `ran`: the error is the tool's own (it ran and failed), not a refusal before it ran. */
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
  const own = evaluate(def.id, pattern, input.rules)
  // A call the tool's rule allows may still need the user once the run has read untrusted content.
  const ctx = { ...input.context, callId: call.toolCallId }
  const rule = (own.action === "allow" && (await taintedRule(def, parsed.data, pattern, ctx, input.rules, input.log.records))) || own
  const permission = rule === own ? def.id : `${TAINTED}${def.id}`
  if (rule.action === "deny") return { ok: false, error: `Permission denied: ${permission} may not be used on "${pattern}".` }
  if (rule.action === "ask") {
    const approved = await input.context.questions.approve(ctx, permission, pattern)
    if (!approved) return { ok: false, error: `Permission denied by the user: ${def.id} may not be used on "${pattern}".` }
  }
  const title = pattern === "*" ? def.id : `${def.id} ${pattern}`.slice(0, 80)
  const running: ToolSummary = { id: call.toolCallId, tool: def.id, status: "running", title }
  input.onTool?.(running)
  try {
    const run = { ...input, onCallUsage: (usage: LanguageModelUsage) => reportUsage(input, input.context.role, usage) }
    const value = await def.execute!(parsed.data, Object.assign(callContext(run, call, running, fresh), { tainted: tainted(input.log.records) || undefined }))
    input.onTool?.({ id: call.toolCallId, tool: def.id, status: "completed", title })
    return { ok: true, value }
  } catch (error) {
    // An abort belongs to the run, not to the tool: let it end the run.
    if (input.context.abort.aborted) throw error
    input.onTool?.({ id: call.toolCallId, tool: def.id, status: "error", title })
    // A failure the tool did not word for the model may name a provider's or Steward's internals
    // (hosts, accounts, credentials), and the model relays what it reads: it gets a reference.
    const why = error instanceof ToolError ? error.message : `Tool ${def.id} failed: ${internalError(input.context.incidents, error, "a tool failed", { tool: def.id, session: input.context.sessionId })}`
    return { ok: false, ran: true, error: why }
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

async function compactLog(input: LoopInput, limits = limitsOf(input)): Promise<void> {
  const { model, compactionSystem: system, log, maxRetries, context, onCompacted } = input
  await input.beforeCall?.()
  const viewer = compactionViewer(log.records, context.user)
  return compact({ model, system, log, limits, viewer, maxRetries, abort: context.abort, onCompacted, onUsage: (usage) => reportUsage(input, "compaction", usage) })
}

function isContextOverflow(error: unknown): boolean {
  return (
    APICallError.isInstance(error) &&
    error.statusCode === 400 &&
    /context|too long|too many tokens|maximum.*tokens/i.test(`${error.message} ${error.responseBody ?? ""}`)
  )
}
