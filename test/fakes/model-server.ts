/**
 * A scripted OpenAI-compatible chat-completions server for tests.
 *
 * Point the real AI SDK provider at it:
 *
 *   const server = await startModelServer(byRole({ teller: sequence({ text: "hi" }) }))
 *   const provider = createOpenAICompatible({ name: "fake", baseURL: server.url, apiKey: "x" })
 *   await generateText({ model: provider("scripted"), ... })
 *   await server.close()
 *
 * Every request is parsed, recorded (with the Steward role found in its system prompt) and
 * answered by the script: plain text, tool calls (args may be a raw string to send malformed
 * JSON), an HTTP error in OpenAI's error shape, or a hang until the client aborts. Both the
 * non-streaming and the `stream: true` (SSE) forms are produced, with `usage` in each.
 *
 * A script that throws (including byRole with no script for the role, or an exhausted
 * sequence) becomes HTTP 500 with the exception's message and a `retry-after-ms: 0` header, so
 * the AI SDK's retries of it are immediate and the test fails fast with the message visible.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

// ---------------------------------------------------------------------------------------------
// Wire types (the subset of the OpenAI chat-completions request the AI SDK sends)

export interface WireToolCall {
  id: string
  type?: "function"
  function: { name: string; arguments: string }
}

export interface WireMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {})
  /** A string, or an array of parts such as `{ type: "text", text }`. */
  content?: unknown
  tool_calls?: WireToolCall[]
  tool_call_id?: string
  name?: string
}

export interface WireTool {
  type: "function"
  function: { name: string; description?: string; parameters?: unknown; strict?: boolean }
}

export interface ChatCompletionBody {
  model: string
  messages: WireMessage[]
  tools?: WireTool[]
  tool_choice?: unknown
  stream?: boolean
  [key: string]: unknown
}

// ---------------------------------------------------------------------------------------------
// Script types

export interface ToolResult {
  tool_call_id: string
  /** The tool message's content as text. */
  content: string
  /** Name of the tool, looked up from the assistant message that made the call (if found). */
  toolName?: string
}

export interface ChatRequest {
  /** 0-based arrival index among all chat-completion requests this server has seen. */
  index: number
  /** The parsed request body. */
  body: ChatCompletionBody
  messages: WireMessage[]
  /** Joined text of all system messages (joined with "\n\n"). */
  system: string
  /** Text of the last user message, "" if none. */
  lastUserText: string
  /** Names of the tools offered in the request. */
  toolNames: string[]
  /** Tool messages that follow the last assistant message. */
  lastToolResults: ToolResult[]
  /** Steward role from a `# Role: <role>` line in the system prompt, e.g. "worker". */
  role: string | undefined
  /** Text in parentheses after the role, e.g. "research" for `# Role: worker (research)`. */
  roleDetail: string | undefined
  stream: boolean
}

export interface ReplyUsage {
  prompt: number
  completion: number
  /** Prompt tokens read from the provider's cache (sent as prompt_tokens_details.cached_tokens). */
  cached?: number
}

/** How a streamed reply arrives: its text (or its tool calls' arguments) in `chunks` deltas spread
 *  evenly over `overMs`; after `holdAfter` deltas the stream waits for `hold` (a crash mid-answer). */
export type Pace = { chunks: number; overMs: number; holdAfter?: number; hold?: Promise<unknown> }

export type TextReply = { text: string; usage?: ReplyUsage; pace?: Pace }

export type ToolCallsReply = {
  toolCalls: Array<{
    name: string
    /** An object is JSON-encoded; a string is sent verbatim as `function.arguments`. */
    args: object | string
    id?: string
  }>
  text?: string
  usage?: ReplyUsage
  pace?: Pace
}

export type ErrorReply = {
  error: { status: number; message?: string; retryAfterMs?: number }
}

export type HangReply = { hang: true }

export type Reply = TextReply | ToolCallsReply | ErrorReply | HangReply

export type Script = (req: ChatRequest) => Reply | Promise<Reply>

export interface RecordedRequest {
  index: number
  /** Steward role parsed from the system prompt, undefined when there is no marker. */
  role: string | undefined
  roleDetail: string | undefined
  body: ChatCompletionBody
  stream: boolean
  headers: IncomingMessage["headers"]
  /** When the first delta of text or tool input was written, streamed (`performance.now()`). */
  firstTokenAt?: number
}

export interface ModelServerOptions {
  /** Characters per streamed text delta / tool-argument delta (default 8). */
  streamChunkSize?: number
  /** Model id reported in responses (default: the requested model). */
  model?: string
  /** When set, a request without `Authorization: Bearer <apiKey>` is answered 401. */
  apiKey?: string
  /** What `/v1/audio/transcriptions` answers for an upload (default: "transcript of <n> bytes"). */
  transcribe?: (audio: Buffer, model: string) => string
}

export interface ModelServer {
  /** Base URL ending in `/v1`, for `createOpenAICompatible({ baseURL })`. */
  url: string
  /** Every chat-completion request body, in arrival order. */
  requests: RecordedRequest[]
  /** Exceptions thrown by the script (each also answered with HTTP 500). */
  scriptErrors: Error[]
  /** Every transcription request (OpenAI's audio API, multipart): the model and the audio. */
  transcriptions: Array<{ model: string; audio: Buffer; filename: string }>
  /** Resolves once at least `n` requests have arrived; rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>
  /** Stops listening, drops every socket (including hung requests) and resolves. */
  close(): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Helpers for scripts

const ROLE_LINE = /^#\s*Role:\s*([A-Za-z][\w-]*)(?:\s*\(([^)]*)\))?/m

/** Parses the `# Role: <role> (<detail>)` marker out of a system prompt. */
export function parseRole(system: string): { role: string | undefined; roleDetail: string | undefined } {
  const m = ROLE_LINE.exec(system)
  if (!m) return { role: undefined, roleDetail: undefined }
  return { role: m[1]!.toLowerCase(), roleDetail: m[2]?.trim() || undefined }
}

/** Text of a message content (string or array of text parts). */
export function contentText(content: unknown): string {
  if (content == null) return ""
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content
      .map((p) =>
        p && typeof p === "object" && "text" in p && typeof (p as { text: unknown }).text === "string"
          ? (p as { text: string }).text
          : "",
      )
      .join("")
  }
  return JSON.stringify(content)
}

export type RoleScripts = {
  teller?: Script
  planner?: Script
  worker?: Script
  compaction?: Script
}

/**
 * Picks the script by the `# Role: <role>` marker in the system prompt (`teller`, `planner`,
 * `worker` — also `worker (<type>)` — and `compaction`). A request with no marker, or a role
 * with no script, throws, which the server answers with HTTP 500 naming the role.
 */
export function byRole(scripts: RoleScripts): Script {
  return (req) => {
    if (req.role === undefined) {
      throw new Error(
        `byRole: request #${req.index} has no "# Role: <role>" marker in its system prompt ` +
          `(system starts: ${JSON.stringify(req.system.slice(0, 80))})`,
      )
    }
    const script = (scripts as Record<string, Script | undefined>)[req.role]
    if (!script) {
      throw new Error(
        `byRole: no script for role "${req.role}"` +
          (req.roleDetail ? ` (${req.roleDetail})` : "") +
          ` (request #${req.index}; scripted roles: ${Object.keys(scripts).join(", ") || "none"})`,
      )
    }
    return script(req)
  }
}

/**
 * A script answering with the given replies in order (a step may also be a Script, called
 * with the request). Throws once every step is used, so an unexpected extra call fails loudly.
 */
export function sequence(...steps: Array<Reply | Script>): Script {
  let next = 0
  return (req) => {
    if (next >= steps.length) {
      throw new Error(
        `sequence exhausted: all ${steps.length} replies used, got another request ` +
          `(#${req.index}${req.role ? `, role ${req.role}` : ""}, last user text ${JSON.stringify(req.lastUserText.slice(0, 80))})`,
      )
    }
    const step = steps[next++]!
    return typeof step === "function" ? step(req) : step
  }
}

// ---------------------------------------------------------------------------------------------
// Server

function toChatRequest(body: ChatCompletionBody, index: number): ChatRequest {
  const messages = Array.isArray(body.messages) ? body.messages : []
  const system = messages
    .filter((m) => m.role === "system")
    .map((m) => contentText(m.content))
    .join("\n\n")
  const lastUser = [...messages].reverse().find((m) => m.role === "user")
  const toolNames = (body.tools ?? []).map((t) => t.function?.name).filter((n): n is string => !!n)

  let lastAssistant = -1
  messages.forEach((m, i) => {
    if (m.role === "assistant") lastAssistant = i
  })
  const callNames = new Map<string, string>()
  if (lastAssistant >= 0) {
    for (const c of messages[lastAssistant]!.tool_calls ?? []) callNames.set(c.id, c.function?.name)
  }
  const lastToolResults: ToolResult[] = messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === "tool")
    .map((m) => ({
      tool_call_id: m.tool_call_id ?? "",
      content: contentText(m.content),
      toolName: callNames.get(m.tool_call_id ?? ""),
    }))

  return {
    index,
    body,
    messages,
    system,
    lastUserText: contentText(lastUser?.content),
    toolNames,
    lastToolResults,
    ...parseRole(system),
    stream: body.stream === true,
  }
}

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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed || res.writableEnded) return
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text).toString(),
    ...headers,
  })
  res.end(text)
}

function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { message, ...errorType(status) } }, headers)
}

export async function startModelServer(script: Script, opts: ModelServerOptions = {}): Promise<ModelServer> {
  const chunkSize = Math.max(1, opts.streamChunkSize ?? 8)
  const requests: RecordedRequest[] = []
  const scriptErrors: Error[] = []
  const waiters = new Set<{ n: number; resolve: (r: RecordedRequest[]) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>()
  let closed = false
  let seq = 0

  const notify = () => {
    for (const w of waiters) {
      if (requests.length >= w.n) {
        clearTimeout(w.timer)
        waiters.delete(w)
        w.resolve(requests.slice())
      }
    }
  }

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const parts: Buffer[] = []
      req.on("data", (c: Buffer) => parts.push(c))
      req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
      req.on("error", reject)
    })

  const transcriptions: ModelServer["transcriptions"] = []
  /** OpenAI's POST /audio/transcriptions: multipart with `file` and `model`; answers { text }. */
  const transcribe = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parts: Buffer[] = []
    for await (const chunk of req) parts.push(chunk as Buffer)
    const form = await new Request("http://127.0.0.1/", { method: "POST", headers: { "content-type": req.headers["content-type"] ?? "" }, body: new Uint8Array(Buffer.concat(parts)) }).formData()
    const file = form.get("file")
    const model = form.get("model")
    if (!(file instanceof File) || typeof model !== "string") return sendError(res, 400, "fake model server: a transcription needs file and model")
    const audio = Buffer.from(await file.arrayBuffer())
    transcriptions.push({ model, audio, filename: file.name })
    sendJson(res, 200, { text: opts.transcribe?.(audio, model) ?? `transcript of ${audio.byteLength} bytes` })
  }

  const reply = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "")
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      sendError(res, 401, "Incorrect API key provided")
      return
    }
    if (req.method === "POST" && path === "/v1/audio/transcriptions") return transcribe(req, res)
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: [{ id: opts.model ?? "scripted", object: "model", created: 0, owned_by: "steward-test" }],
      })
      return
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      sendError(res, 404, `fake model server: no route for ${req.method} ${req.url}`)
      return
    }

    let body: ChatCompletionBody
    try {
      const raw = await readBody(req)
      body = JSON.parse(raw) as ChatCompletionBody
      if (!body || typeof body !== "object" || !Array.isArray(body.messages)) throw new Error("body has no messages array")
    } catch (e) {
      sendError(res, 400, `fake model server: bad request body: ${(e as Error).message}`)
      return
    }

    const chat = toChatRequest(body, seq++)
    const recorded: RecordedRequest = {
      index: chat.index,
      role: chat.role,
      roleDetail: chat.roleDetail,
      body,
      stream: chat.stream,
      headers: req.headers,
    }
    requests.push(recorded)
    notify()

    let r: Reply
    try {
      r = await script(chat)
      if (!r || typeof r !== "object") throw new Error(`script returned ${JSON.stringify(r)} instead of a Reply`)
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e))
      scriptErrors.push(err)
      sendError(res, 500, `fake model server: script threw: ${err.message}`, { "retry-after-ms": "0" })
      return
    }

    if ("hang" in r) {
      // Never answer; the client's abort (or close()) destroys the socket.
      return
    }
    if ("error" in r) {
      // As OpenAI does: the id the provider's support finds the call by.
      const headers: Record<string, string> = { "x-request-id": `req_fake_${requests.length}` }
      if (r.error.retryAfterMs !== undefined) headers["retry-after-ms"] = String(r.error.retryAfterMs)
      sendError(res, r.error.status, r.error.message ?? `scripted error ${r.error.status}`, headers)
      return
    }

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
    const model = opts.model ?? body.model ?? "scripted"

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
    const send = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      if (res.destroyed || res.writableEnded) return
      res.write(
        `data: ${JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model,
          choices: [{ index: 0, delta, finish_reason: null }],
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
      recorded.firstTokenAt ??= performance.now()
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
    res.write(
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta: {}, finish_reason: finishReason }],
        usage,
      })}\n\n`,
    )
    res.write("data: [DONE]\n\n")
    res.end()
  }

  const server = createServer((req, res) => {
    reply(req, res).catch((e: unknown) => {
      // Bugs in the fake itself: answer 500 rather than crash the test process.
      try {
        sendError(res, 500, `fake model server internal error: ${(e as Error)?.message ?? String(e)}`)
      } catch {
        res.destroy()
      }
    })
  })
  server.on("clientError", (_err, socket) => socket.destroy())

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    scriptErrors,
    transcriptions,
    waitForRequests(n, timeoutMs = 5_000) {
      if (requests.length >= n) return Promise.resolve(requests.slice())
      if (closed) return Promise.reject(new Error(`fake model server closed with ${requests.length}/${n} requests`))
      return new Promise((resolve, reject) => {
        const w = {
          n,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(w)
            reject(
              new Error(
                `fake model server: timed out after ${timeoutMs}ms waiting for ${n} requests (got ${requests.length}: ` +
                  `${requests.map((r) => r.role ?? "?").join(", ")})`,
              ),
            )
          }, timeoutMs),
        }
        waiters.add(w)
      })
    },
    close() {
      if (closed) return Promise.resolve()
      closed = true
      for (const w of waiters) {
        clearTimeout(w.timer)
        w.reject(new Error(`fake model server closed with ${requests.length}/${w.n} requests`))
      }
      waiters.clear()
      return new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
  }
}
