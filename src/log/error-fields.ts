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
  return {
    type: error.name,
    message: error.message.length > MESSAGE_CHARS ? `${error.message.slice(0, MESSAGE_CHARS - 1)}…` : error.message,
    ...(call?.statusCode === undefined ? {} : { status: call.statusCode }),
    ...(call && URL.canParse(call.url) ? { provider: new URL(call.url).host } : {}),
    ...(typeof body?.model === "string" ? { model: body.model } : {}),
    ...(requestIdOf(call?.responseHeaders) ?? {}),
  }
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
