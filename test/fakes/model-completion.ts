import type { ServerResponse } from "node:http"
import type { ChatRequest, ReplyUsage, TextReply, ToolCallsReply, WireToolCall } from "./model-script.ts"

/**
 * How the fake model server writes its answers in OpenAI's shapes: a chat completion, whole
 * (JSON) or streamed (SSE chunks, paced when the reply asks), with its `usage`; and errors.
 */

function estimateTokens(value: unknown): number {
  const s = typeof value === "string" ? value : JSON.stringify(value ?? "")
  return Math.max(1, Math.ceil(s.length / 4))
}

function chunks(s: string, size: number): string[] {
  if (s.length === 0) return []
  const out: string[] = []
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
  return out
}

function errorType(status: number): { type: string; code: string } {
  if (status === 429) return { type: "rate_limit_error", code: "rate_limit_exceeded" }
  if (status === 401) return { type: "authentication_error", code: "invalid_api_key" }
  if (status === 404) return { type: "not_found_error", code: "not_found" }
  if (status === 408) return { type: "timeout_error", code: "timeout" }
  if (status >= 500) return { type: "server_error", code: "server_error" }
  return { type: "invalid_request_error", code: "invalid_request" }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed || res.writableEnded) return
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text).toString(),
    ...headers,
  })
  res.end(text)
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, ...errorType(status) } }, headers)
}

export type CompletionOptions = {
  /** Characters per streamed delta when the reply sets no pace. */
  chunkSize: number
  /** The model id reported. */
  model: string
  /** Called when the first delta of text or tool input is written, streamed. */
  onFirstToken(): void
}

/** Answers `chat` with a text or tool-call reply, as JSON or (when the request asked) SSE. */
export async function writeCompletion(res: ServerResponse, chat: ChatRequest, r: TextReply | ToolCallsReply, { chunkSize, model, onFirstToken }: CompletionOptions): Promise<void> {
  const body = chat.body
  const text = "text" in r && typeof r.text === "string" ? r.text : ""
  const toolCalls: WireToolCall[] =
    "toolCalls" in r
      ? r.toolCalls.map((c, i) => ({
          id: c.id ?? `call_${chat.index}_${i}`,
          type: "function" as const,
          function: { name: c.name, arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args) },
        }))
      : []
  const finishReason = toolCalls.length > 0 ? "tool_calls" : "stop"
  const u: ReplyUsage = r.usage ?? {
    prompt: estimateTokens(body.messages),
    completion: estimateTokens(text + toolCalls.map((c) => c.function.name + c.function.arguments).join("")),
  }
  const cached = u.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: u.cached } }
  const usage = { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.prompt + u.completion, ...cached }
  const id = `chatcmpl-fake-${chat.index}`
  const created = Math.floor(Date.now() / 1000)

  if (!chat.stream) {
    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: text.length > 0 || toolCalls.length === 0 ? text : null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: finishReason,
        },
      ],
      usage,
    })
    return
  }

  if (res.destroyed || res.writableEnded) return
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  })
  /** One SSE chunk: a delta, or (with its finish reason) the last one. */
  const send = (delta: Record<string, unknown>, finish_reason: string | null = null, extra: Record<string, unknown> = {}) => {
    if (res.destroyed || res.writableEnded) return
    res.write(
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason }],
        ...extra,
      })}\n\n`,
    )
  }
  const pace = "pace" in r ? r.pace : undefined
  const streamed = text.length + toolCalls.reduce((sum, c) => sum + c.function.arguments.length, 0)
  const size = pace ? Math.max(1, Math.ceil(streamed / pace.chunks)) : chunkSize
  let deltas = 0
  /** Paced: the pause before the next delta, and the hold after `holdAfter` of them. */
  const next = async () => {
    onFirstToken()
    if (!pace) return
    deltas++
    if (deltas === pace.holdAfter) await pace.hold
    await new Promise((resolve) => setTimeout(resolve, pace.overMs / pace.chunks))
  }
  send({ role: "assistant", content: "" })
  for (const piece of chunks(text, size)) {
    send({ content: piece })
    await next()
  }
  for (const [index, c] of toolCalls.entries()) {
    send({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] })
    for (const piece of chunks(c.function.arguments, size)) {
      send({ tool_calls: [{ index, function: { arguments: piece } }] })
      await next()
    }
  }
  if (res.destroyed || res.writableEnded) return
  send({}, finishReason, { usage })
  res.write("data: [DONE]\n\n")
  res.end()
}
