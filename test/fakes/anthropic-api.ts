/**
 * A scripted Anthropic Messages API for tests (POST /v1/messages), answering whole or — for a
 * request with `"stream": true` — as Anthropic's event stream (`anthropic-stream.ts`), paced
 * when the reply says so.
 *
 *   const api = await startAnthropicApi((req) => ({ text: "hi" }))
 *   createAnthropic({ baseURL: api.url, apiKey: "x" })   // api.url ends in /v1
 *
 * Every request body is recorded. Prompt caching is simulated the way Anthropic describes it:
 * a request writes the prompt up to each of its `cache_control` breakpoints to the cache, and
 * reads the longest cached prompt its own blocks start with — reported as
 * `cache_read_input_tokens` (characters / 4), the rest as `input_tokens`. A script that throws
 * is answered with HTTP 500 naming the error.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { streamMessage, type AnthropicMessage, type AnthropicPace } from "./anthropic-stream.ts"

export interface AnthropicBlock {
  type: string
  text?: string
  cache_control?: { type: string }
  [key: string]: unknown
}

export interface AnthropicBody {
  model: string
  system?: AnthropicBlock[]
  messages: Array<{ role: "user" | "assistant"; content: AnthropicBlock[] }>
  tools?: Array<{ name: string; cache_control?: unknown; [key: string]: unknown }>
  [key: string]: unknown
}

export interface AnthropicRequest {
  index: number
  body: AnthropicBody
  /** Text of the system blocks, joined. */
  system: string
  /** Steward role from the `# Role: <role>` line of the system prompt. */
  role: string | undefined
  /** The newest text block of a user message (consecutive user messages arrive as one). */
  lastUserText: string
  /** The newest message holds only tool results. */
  afterTool: boolean
  /** Asked for the streamed answer. */
  stream: boolean
  /** When the first text or input delta of the streamed answer went out (`performance.now()`). */
  firstTokenAt?: number
}

export type AnthropicReply = { text?: string; toolCalls?: Array<{ name: string; input: object }>; pace?: AnthropicPace }
export type AnthropicScript = (req: AnthropicRequest) => AnthropicReply

export interface AnthropicApi {
  url: string
  requests: AnthropicRequest[]
  close(): Promise<void>
}

/** A request as the cache sees it: tools, then system blocks, then each message's blocks, in
 *  order, without the markers (which say where to cache, not what). */
export function cacheBlocks(body: AnthropicBody): Array<{ key: string; breakpoint: boolean }> {
  const blocks: Array<{ key: string; breakpoint: boolean }> = []
  const add = (where: string, block: { cache_control?: unknown }) => {
    const { cache_control, ...content } = block
    blocks.push({ key: `${where}:${JSON.stringify(content)}`, breakpoint: cache_control !== undefined })
  }
  for (const tool of body.tools ?? []) add("tool", tool)
  for (const block of body.system ?? []) add("system", block)
  for (const message of body.messages) for (const block of message.content) add(message.role, block)
  return blocks
}

export async function startAnthropicApi(script: AnthropicScript): Promise<AnthropicApi> {
  const requests: AnthropicRequest[] = []
  const cached = new Set<string>()
  let ids = 0

  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      const parts: Buffer[] = []
      req.on("data", (chunk: Buffer) => parts.push(chunk))
      req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
      req.on("error", reject)
    })

  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" })
      res.end(JSON.stringify(body))
    }
    read(req)
      .then((raw) => {
        if (req.method !== "POST" || req.url !== "/v1/messages") return send(404, { type: "error", error: { type: "not_found_error", message: `no route ${req.method} ${req.url}` } })
        const body = JSON.parse(raw) as AnthropicBody
        const last = body.messages.at(-1)
        const system = (body.system ?? []).map((block) => block.text ?? "").join("\n")
        const request: AnthropicRequest = {
          index: requests.length,
          body,
          system,
          role: /^#\s*Role:\s*(\w+)/m.exec(system)?.[1]?.toLowerCase(),
          lastUserText: body.messages.flatMap((m) => (m.role === "user" ? m.content : [])).findLast((block) => block.type === "text")?.text ?? "",
          afterTool: last?.role === "user" && last.content.every((block) => block.type === "tool_result"),
          stream: body.stream === true,
        }
        requests.push(request)
        const reply = script(request)
        const blocks = cacheBlocks(body)
        const prefixes = blocks.map((_, i) => blocks.slice(0, i + 1).map((b) => b.key).join("\n"))
        const total = Math.ceil(blocks.reduce((sum, block) => sum + block.key.length, 0) / 4)
        const hit = prefixes.findLastIndex((prefix) => cached.has(prefix))
        const read = hit < 0 ? 0 : Math.ceil(prefixes[hit]!.length / 4)
        blocks.forEach((block, i) => block.breakpoint && cached.add(prefixes[i]!))
        const content: AnthropicMessage["content"] = [
          ...(reply.text ? [{ type: "text" as const, text: reply.text }] : []),
          ...(reply.toolCalls ?? []).map((call) => ({ type: "tool_use" as const, id: `toolu_${++ids}`, name: call.name, input: call.input })),
        ]
        const message: AnthropicMessage = {
          id: `msg_${request.index}`,
          model: body.model,
          content,
          stop_reason: reply.toolCalls?.length ? "tool_use" : "end_turn",
          usage: { input_tokens: Math.max(0, total - read), output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: read },
        }
        if (request.stream) return streamMessage(res, message, reply.pace, () => (request.firstTokenAt ??= performance.now()))
        send(200, { ...message, type: "message", role: "assistant", stop_sequence: null })
      })
      .catch((error: unknown) => send(500, { type: "error", error: { type: "api_error", message: `fake Anthropic API: ${error instanceof Error ? error.message : String(error)}` } }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
