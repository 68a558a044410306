import type { CreateMessageRequest, CreateMessageResult } from "@modelcontextprotocol/sdk/types.js"
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import type { ModelMessage } from "ai"
import type { ToolContext } from "../tool/tool.ts"

/** The permission rule that lets a server use the calling Worker's model (pattern: the server's
 *  name as in the MCP config). Unless a rule says otherwise the user is asked. */
export const SAMPLING_PERMISSION = "mcp_sampling"

type SamplingParams = CreateMessageRequest["params"]
type SamplingContent = SamplingParams["messages"][number]["content"]

/**
 * A server's `sampling/createMessage`, answered by the model of the Worker whose call it serves,
 * with the owner's consent (mcp_sampling) and within the request's token limit; the tokens are
 * counted in that run's usage.
 */
export async function sample(ctx: ToolContext, server: string, params: SamplingParams): Promise<CreateMessageResult> {
  if (!ctx.complete || !ctx.permit) throw new McpError(ErrorCode.InvalidRequest, "sampling is not available to this call")
  if (!(await ctx.permit(SAMPLING_PERMISSION, server))) throw new McpError(ErrorCode.InvalidRequest, `the user did not allow ${server} to use the model (permission ${SAMPLING_PERMISSION})`)
  const result = await ctx.complete({
    system: params.systemPrompt,
    messages: params.messages.map((message): ModelMessage => (message.role === "user" ? { role: "user", content: userParts(message.content) } : { role: "assistant", content: textOf(message.content) })),
    maxOutputTokens: params.maxTokens,
    temperature: params.temperature,
    stopSequences: params.stopSequences,
  })
  return { role: "assistant", content: { type: "text", text: result.text }, model: result.model, stopReason: result.finishReason === "length" ? "maxTokens" : "endTurn" }
}

function partsOf(content: SamplingContent) {
  return Array.isArray(content) ? content : [content]
}

/** Text and images as the model reads them; what a model cannot take (audio, tool calls) is named. */
function userParts(content: SamplingContent): Array<{ type: "text"; text: string } | { type: "image"; image: string; mediaType: string }> {
  return partsOf(content).map((part) => {
    if (part.type === "text") return { type: "text", text: part.text }
    if (part.type === "image") return { type: "image", image: part.data, mediaType: part.mimeType }
    return { type: "text", text: `[${part.type} left out]` }
  })
}

function textOf(content: SamplingContent): string {
  return partsOf(content)
    .map((part) => (part.type === "text" ? part.text : `[${part.type}]`))
    .join("\n")
}
