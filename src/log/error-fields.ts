import { APICallError } from "ai"
import pino from "pino"

/** What is kept of a provider's error message: its gist, never a page of echoed input. */
const MESSAGE_CHARS = 300

/** The fields a failed model call is logged with below debug: enough to find the call in the
 *  provider's dashboard, nothing of what was sent. */
export interface ModelErrorFields {
  type: string
  message: string
  status?: number
  provider?: string
  model?: string
  requestId?: string
}

/**
 * pino's `err` serializer. The AI SDK's errors carry what was sent and received — the request
 * body (system prompt, history, the user's words, every tool's schema), the response body, the
 * model's raw output — which at warn or error level would fill the disk and put private text in
 * the log: those become ModelErrorFields. At debug (`verbose`) they are logged whole.
 */
export function errorSerializer(verbose: boolean): (error: unknown) => unknown {
  return (error) => (verbose || !isModelError(error) ? pino.stdSerializers.err(error as Error) : modelErrorFields(error))
}

function isModelError(error: unknown): error is Error {
  return error instanceof Error && error.name.startsWith("AI_")
}

export function modelErrorFields(error: Error): ModelErrorFields {
  const call = apiCallOf(error)
  const body = call?.requestBodyValues as { model?: unknown } | undefined
  const message = withoutEcho(error.message, call?.requestBodyValues)
  return {
    type: error.name,
    message: message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS - 1)}…` : message,
    ...(call?.statusCode === undefined ? {} : { status: call.statusCode }),
    ...(call && URL.canParse(call.url) ? { provider: new URL(call.url).host } : {}),
    ...(typeof body?.model === "string" ? { model: body.model } : {}),
    ...(requestIdOf(call?.responseHeaders) ?? {}),
  }
}

/** The shortest run of the request a message may repeat before it counts as an echo: long
 *  enough for "invalid request" or a model id to stay, short enough to catch a quoted sentence. */
const ECHO_CHARS = 16

/**
 * The provider's message without what it quotes of the request: some providers and gateways
 * echo the offending input ("invalid content: <the user's message>"). Every run of at least
 * ECHO_CHARS characters that is also in the request body (or in its JSON, where quotes and
 * newlines are escaped) becomes "[…]", so neither a prompt nor a user's words reach the log.
 */
function withoutEcho(whole: string, request: unknown): string {
  // Past this, the message is cut anyway: the scan stays cheap against a large request.
  const message = whole.slice(0, MESSAGE_CHARS * 3)
  if (request === undefined || message.length < ECHO_CHARS) return message
  const json = JSON.stringify(request)
  const sent = [json, texts(request).join("\n")]
  const echoed = (from: number, to: number) => sent.some((text) => text.includes(message.slice(from, to)))
  let kept = ""
  let at = 0
  while (at < message.length) {
    if (at + ECHO_CHARS <= message.length && echoed(at, at + ECHO_CHARS)) {
      let end = at + ECHO_CHARS
      while (end < message.length && echoed(at, end + 1)) end++
      kept += "[…]"
      at = end
    } else kept += message[at++]
  }
  return kept
}

/** Every string in the request body (messages' content parts, the system prompt, tool descriptions). */
function texts(value: unknown, into: string[] = []): string[] {
  if (typeof value === "string") into.push(value)
  else if (Array.isArray(value)) for (const item of value) texts(item, into)
  else if (value && typeof value === "object") for (const item of Object.values(value)) texts(item, into)
  return into
}

/** The API call under a retry's or another wrapper's error. */
function apiCallOf(error: unknown): APICallError | undefined {
  for (let at = error, depth = 0; at && depth < 5; depth++) {
    if (APICallError.isInstance(at)) return at
    const next = at as { lastError?: unknown; cause?: unknown }
    at = next.lastError ?? next.cause
  }
  return undefined
}

/** OpenAI's and most gateways' `x-request-id`, Anthropic's `request-id`. */
function requestIdOf(headers: Record<string, string> | undefined): { requestId: string } | undefined {
  const id = headers?.["x-request-id"] ?? headers?.["request-id"]
  return id ? { requestId: id } : undefined
}
