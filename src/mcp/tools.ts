import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js"
import type { JSONSchema7 } from "ai"
import { z } from "zod"
import { defineTool, ToolError, type ToolDefinition } from "../tool/tool.ts"
import { messageOf } from "./connect.ts"

// Like fetch_url's default: an MCP result lands in the model's context window, and a server
// that returns a whole repository listing must not crowd out the task.
export const MAX_RESULT_CHARS = 20_000
// Enough of the arguments for an owner to recognise the call when a rule asks them.
const PATTERN_CHARS = 200

export interface McpToolSource {
  server: string
  client: Client
  timeoutMs: number
  /** A call failed without an answer from the server (not an error it reported): it may be gone. */
  onUnanswered: (error: unknown) => void
}

/**
 * One MCP tool as a Steward tool named `name`. The model is shown the server's own JSON
 * Schema; the zod form of it checks calls before they are sent, and where it cannot be built
 * (a schema zod cannot read) the server is left to check them.
 */
export function mcpTool(source: McpToolSource, tool: Tool, name: string): ToolDefinition {
  const inputSchema = { ...tool.inputSchema, properties: tool.inputSchema.properties ?? {} } as JSONSchema7
  return defineTool({
    id: name,
    description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${source.server})`,
    parameters: checker(inputSchema),
    inputSchema,
    // The arguments, so a rule can tell calls apart and an owner asked to allow one sees what it does.
    pattern: (args) => JSON.stringify(args).slice(0, PATTERN_CHARS),
    // What a server answers is outside content; only a tool it declares read-only may run
    // unasked once the run has read such content.
    untrustedOutput: true,
    ...(tool.annotations?.readOnlyHint !== true && { guardedWhenTainted: true as const }),
    async execute(args, ctx) {
      let result: CallToolResult
      try {
        result = (await source.client.callTool({ name: tool.name, arguments: args as Record<string, unknown> }, undefined, {
          timeout: source.timeoutMs,
          signal: ctx.abort,
        })) as CallToolResult
      } catch (error) {
        ctx.abort.throwIfAborted()
        const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout
        if (timedOut || !(error instanceof McpError)) source.onUnanswered(error)
        if (timedOut) throw new ToolError(`${name} did not answer within ${source.timeoutMs / 1000} s (MCP_TOOL_TIMEOUT); the call was cancelled`)
        if (error instanceof McpError) throw new ToolError(`${name} failed: ${error.message}`)
        throw new ToolError(`${name}: MCP server "${source.server}" could not be reached: ${messageOf(error)}`)
      }
      const { text, truncated } = bounded(resultText(result))
      if (result.isError) throw new ToolError(`${name} reported an error: ${text}`)
      return truncated ? { text, truncated } : { text }
    },
  })
}

function checker(schema: JSONSchema7): z.ZodType {
  try {
    return z.fromJSONSchema(schema as never)
  } catch {
    return z.record(z.string(), z.unknown())
  }
}

/** The result as text: binary parts are named, not inlined, since base64 means nothing to a model. */
export function resultText(result: CallToolResult): string {
  const parts = result.content.map((part) => {
    switch (part.type) {
      case "text":
        return part.text
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType}, ${Math.floor((part.data.length * 3) / 4)} bytes]`
      case "resource":
        return "text" in part.resource ? part.resource.text : `[resource ${part.resource.uri}${part.resource.mimeType ? `, ${part.resource.mimeType}` : ""}]`
      case "resource_link":
        return `[resource ${part.uri}: ${part.name}]`
    }
  })
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent)
  return parts.join("\n")
}

function bounded(text: string): { text: string; truncated: boolean } {
  if (text.length <= MAX_RESULT_CHARS) return { text, truncated: false }
  return { text: `${text.slice(0, MAX_RESULT_CHARS)}\n[… ${text.length - MAX_RESULT_CHARS} more characters cut]`, truncated: true }
}
