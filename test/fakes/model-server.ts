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
 *
 * Beside it: what a script sees and answers, and the helpers to write one (model-script.ts);
 * how an answer is written, JSON, SSE or error (model-completion.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { sendError, sendJson, writeCompletion } from "./model-completion.ts"
import { toChatRequest, type ChatCompletionBody, type Reply, type Script } from "./model-script.ts"

export * from "./model-script.ts"

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

    await writeCompletion(res, chat, r, {
      chunkSize,
      model: opts.model ?? body.model ?? "scripted",
      onFirstToken: () => {
        recorded.firstTokenAt ??= performance.now()
      },
    })
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
