import { createHash } from "node:crypto"
import type { LanguageModel, ModelMessage, SystemModelMessage, ToolSet } from "ai"
import { estimateTokens } from "./context.ts"

type ProviderOptions = NonNullable<SystemModelMessage["providerOptions"]>

/** Anthropic caches the prompt up to a block marked so; it allows four marks per request. */
const BREAKPOINT: ProviderOptions = { anthropic: { cacheControl: { type: "ephemeral" } } }

/** What one model call sends, laid out stable-first so that each request repeats the last one's
 *  start: tools (in their fixed order), instructions, long-lived context, then the conversation,
 *  to which only new messages are added. */
export interface Request {
  system: SystemModelMessage[]
  messages: ModelMessage[]
  providerOptions: ProviderOptions
}

/**
 * The request for `messages`, with Anthropic cache breakpoints where the cache should end: after
 * the instructions (tools included, since Anthropic caches tools first), after the long-lived
 * context, at the end of the previous request's conversation (the message the newest assistant
 * message answered) and at the end of the conversation so far. The previous request's last mark
 * is therefore marked again in this one, so a step that adds many messages still reads the cache
 * the step before wrote. OpenAI is given a cache key per conversation, which keeps one
 * conversation's requests on the same cache.
 */
export function buildRequest(instructions: string, longLived: string | undefined, messages: ModelMessage[], conversation: string): Request {
  const system: SystemModelMessage[] = [{ role: "system", content: instructions, providerOptions: BREAKPOINT }]
  if (longLived) system.push({ role: "system", content: longLived, providerOptions: BREAKPOINT })
  const marked = new Set([messages.findLastIndex((message) => message.role === "assistant") - 1, messages.length - 1])
  return {
    system,
    messages: messages.map((message, index) => (marked.has(index) ? ({ ...message, providerOptions: BREAKPOINT } as ModelMessage) : message)),
    providerOptions: { openai: { promptCacheKey: cacheKey(conversation) } },
  }
}

/** Hashed: a conversation id names a workspace and a user, which the provider need not see. */
function cacheKey(conversation: string): string {
  return `steward-${createHash("sha256").update(conversation).digest("hex").slice(0, 32)}`
}

const toolTokens = new WeakMap<ToolSet, number>()

/** The prompt's size as the loop estimates it (characters / 4 of what is sent). */
export function estimatePrompt(request: Pick<Request, "system" | "messages">, tools: ToolSet | undefined): number {
  let offered = 0
  if (tools) {
    offered = toolTokens.get(tools) ?? estimateTokens(Object.entries(tools).map(([name, tool]) => ({ name, description: tool.description, schema: schemaOf(tool) })))
    toolTokens.set(tools, offered)
  }
  return offered + estimateTokens(request.system.map((message) => message.content).join("")) + estimateTokens(request.messages)
}

function schemaOf(tool: ToolSet[string]): unknown {
  const schema = (tool.inputSchema as { jsonSchema?: unknown } | undefined)?.jsonSchema
  return schema && typeof (schema as PromiseLike<unknown>).then !== "function" ? schema : {}
}

/** `<provider>:<model-id>`, for usage records. */
export function modelName(model: LanguageModel): string {
  return typeof model === "string" ? model : `${model.provider}:${model.modelId}`
}
