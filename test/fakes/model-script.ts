/**
 * What a script of the fake model server sees and answers: the chat-completions request as
 * the AI SDK sends it, the ChatRequest a script is called with (the Steward role found in its
 * system prompt, the last user text, the tool results), the replies it may give, and the
 * helpers to write scripts with (byRole, sequence, contentText).
 */

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

/** The request a script is called with, from the body as it arrived (the `index`-th). */
export function toChatRequest(body: ChatCompletionBody, index: number): ChatRequest {
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
