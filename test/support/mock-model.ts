/**
 * A scripted in-process model for unit tests, built on the AI SDK's `MockLanguageModelV3`.
 *
 *   const model = scriptedModel(sequence({ toolCalls: [{ name: "echo", args: { text: "hi" } }] }, { text: "done" }))
 *   await generateText({ model, ... })
 *   model.calls[0].lastUserText
 *
 * The script sees each call (the V3 prompt, the system text, the tools offered, the last user
 * text, a counter) and answers with text, tool calls (args may be a raw string: malformed
 * JSON), an error to throw (e.g. an `APICallError`), or a hang that rejects when the call's
 * abort signal fires. A script that throws makes the call reject with that exception.
 */
import { APICallError } from "ai"
import { MockLanguageModelV3 } from "ai/test"

export type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0]
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>
type StreamResult = Awaited<ReturnType<MockLanguageModelV3["doStream"]>>
type PromptMessage = CallOptions["prompt"][number]

export interface ModelCall {
  /** 0-based index of this call among all calls to the model. */
  index: number
  options: CallOptions
  /** The V3 prompt (system message included). */
  prompt: CallOptions["prompt"]
  /** Joined text of the system messages. */
  system: string
  /** Steward role from the `# Role: <role>` line of the system prompt. */
  role: string | undefined
  /** Names of the tools offered; empty when the call offered none. */
  toolNames: string[]
  /** Text of the last user message, "" if none. */
  lastUserText: string
  /** Tool results after the last assistant message, their output rendered as text. */
  lastToolResults: Array<{ toolCallId: string; toolName: string; output: string; isError: boolean }>
}

export interface ReplyUsage {
  input: number
  output: number
  /** Input tokens read from the provider's prompt cache (default 0). */
  cached?: number
}

export type Reply =
  | { text: string; usage?: ReplyUsage }
  | {
      /** `args`: an object is JSON-encoded; a string is sent verbatim (malformed JSON). */
      toolCalls: Array<{ name: string; args: object | string; id?: string }>
      text?: string
      usage?: ReplyUsage
    }
  | { error: Error }
  | { hang: true }

export type Script = (call: ModelCall) => Reply | Promise<Reply>

export type ScriptedModel = MockLanguageModelV3 & { calls: ModelCall[] }

const ROLE_LINE = /^#\s*Role:\s*([A-Za-z][\w-]*)/m

export function scriptedModel(script: Script): ScriptedModel {
  const calls: ModelCall[] = []
  let ids = 0
  const answer = async (options: CallOptions): Promise<GenerateResult> => {
    const call = describeCall(options, calls.length)
    calls.push(call)
    const reply = await script(call)
    if ("error" in reply) throw reply.error
    if ("hang" in reply) return hang(options.abortSignal)
    const content: GenerateResult["content"] = []
    if (reply.text) content.push({ type: "text", text: reply.text })
    const toolCalls = "toolCalls" in reply ? reply.toolCalls : []
    for (const c of toolCalls) {
      content.push({
        type: "tool-call",
        toolCallId: c.id ?? `call_${++ids}`,
        toolName: c.name,
        input: typeof c.args === "string" ? c.args : JSON.stringify(c.args),
      })
    }
    const usage = reply.usage ?? { input: 10, output: 5 }
    return {
      content,
      finishReason: toolCalls.length > 0 ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: usage.input, noCache: usage.input - (usage.cached ?? 0), cacheRead: usage.cached ?? 0, cacheWrite: 0 },
        outputTokens: { total: usage.output, text: usage.output, reasoning: 0 },
      },
      warnings: [],
    }
  }
  const model = new MockLanguageModelV3({
    provider: "mock",
    modelId: "scripted",
    doGenerate: answer,
    doStream: async (options) => toStream(await answer(options)),
  }) as ScriptedModel
  model.calls = calls
  return model
}

/** Picks the script by the `# Role: <role>` line of the system prompt; an unscripted role throws. */
export function byRole(scripts: Partial<Record<"teller" | "planner" | "worker" | "compaction", Script>>): Script {
  return (call) => {
    const script = call.role ? (scripts as Record<string, Script | undefined>)[call.role] : undefined
    if (!script) throw new Error(`byRole: no script for role ${JSON.stringify(call.role)} (call #${call.index}, system starts ${JSON.stringify(call.system.slice(0, 60))})`)
    return script(call)
  }
}

/** Answers with the replies in order (a step may be a Script); throws once they are used up. */
export function sequence(...steps: Array<Reply | Script>): Script {
  let next = 0
  return (call) => {
    if (next >= steps.length) throw new Error(`sequence exhausted: ${steps.length} replies used, got call #${call.index} (last user text ${JSON.stringify(call.lastUserText.slice(0, 80))})`)
    const step = steps[next++]!
    return typeof step === "function" ? step(call) : step
  }
}

/** An error as a provider's HTTP client raises it (400 with "maximum context length" → overflow). */
export function apiError(statusCode: number, message: string, isRetryable = statusCode >= 500 || statusCode === 429): APICallError {
  return new APICallError({ message, url: "http://mock.invalid/v1/chat/completions", requestBodyValues: {}, statusCode, responseBody: JSON.stringify({ error: { message } }), isRetryable })
}

/** Text of a V3 prompt message (text parts joined; tool results rendered). */
export function messageText(message: PromptMessage): string {
  if (typeof message.content === "string") return message.content
  return message.content
    .map((part) => {
      if (part.type === "text") return part.text
      if (part.type === "tool-result") return outputText(part.output)
      return ""
    })
    .join("")
}

function describeCall(options: CallOptions, index: number): ModelCall {
  const prompt = options.prompt
  const system = prompt
    .filter((m) => m.role === "system")
    .map(messageText)
    .join("\n\n")
  const lastUser = prompt.findLast((m) => m.role === "user")
  const lastAssistant = prompt.findLastIndex((m) => m.role === "assistant")
  const lastToolResults = prompt.slice(lastAssistant + 1).flatMap((m) =>
    m.role === "tool"
      ? m.content.flatMap((part) =>
          part.type === "tool-result"
            ? [{ toolCallId: part.toolCallId, toolName: part.toolName, output: outputText(part.output), isError: part.output.type.startsWith("error") }]
            : [],
        )
      : [],
  )
  return {
    index,
    options,
    prompt,
    system,
    role: ROLE_LINE.exec(system)?.[1]?.toLowerCase(),
    toolNames: (options.tools ?? []).map((t) => t.name),
    lastUserText: lastUser ? messageText(lastUser) : "",
    lastToolResults,
  }
}

function outputText(output: { type: string; value?: unknown }): string {
  if (typeof output.value === "string") return output.value
  return JSON.stringify(output.value ?? null)
}

function hang(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    // Without a signal nothing could end the call: fail instead of hanging the test.
    if (!signal) return reject(new Error("hang reply, but the call has no abort signal"))
    if (signal.aborted) return reject(signal.reason)
    signal.addEventListener("abort", () => reject(signal.reason), { once: true })
  })
}

function toStream(result: GenerateResult): StreamResult {
  type Part = StreamResult["stream"] extends ReadableStream<infer P> ? P : never
  const parts: Part[] = [{ type: "stream-start", warnings: [] }]
  result.content.forEach((part, i) => {
    if (part.type === "text") {
      parts.push({ type: "text-start", id: `t${i}` }, { type: "text-delta", id: `t${i}`, delta: part.text }, { type: "text-end", id: `t${i}` })
    } else if (part.type === "tool-call") {
      parts.push(part)
    }
  })
  parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage })
  return {
    stream: new ReadableStream<Part>({
      start(controller) {
        for (const part of parts) controller.enqueue(part)
        controller.close()
      },
    }),
  }
}
