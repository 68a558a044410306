import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ErrorCode, McpError, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js"
import type { JSONSchema7 } from "ai"
import { z } from "zod"
import { defineTool, ToolError, type ToolContext, type ToolDefinition } from "../tool/tool.ts"
import type { CallsInFlight } from "./calls.ts"
import { messageOf } from "./connect.ts"
import { pacedProgress } from "./progress.ts"
import { formatResult } from "./result.ts"

// Enough of the arguments for an owner to recognise the call when a rule asks them.
const PATTERN_CHARS = 200

export interface McpToolSource {
  server: string
  /** The client of the live connection; a ToolError saying why there is none (the server is
   *  restarting, and when to try again) otherwise. */
  client(): Client
  /** MCP_TOOL_TIMEOUT: the longest a call may go without an answer or a progress report… */
  timeoutMs: number
  /** …and MCP_TOOL_MAX_SECONDS: the longest it may run however often it reports progress. */
  maxMs: number
  calls: CallsInFlight
  /** Before each call: tells the server when its roots change (a call for another user). */
  beforeCall(ctx: ToolContext): Promise<void>
  /** A call failed without an answer from the server (not an error it reported): it may be gone. */
  onUnanswered: (error: unknown) => void
  /** The server no longer knows the session (a Streamable HTTP server restarted): a new one. */
  reconnect(): Promise<void>
  /** Why the server is down and when it is tried again; undefined while it runs. */
  whyDown(): string | undefined
}

/** Whether a tool can be offered: one that can only run as an MCP task is not (Steward does
 *  not speak the tasks API, and a plain call of it always fails). */
export function callable(tool: Tool): boolean {
  return tool.execution?.taskSupport !== "required"
}

/**
 * One MCP tool as a Steward tool named `name`. The model is shown the server's own JSON
 * Schema and the tool's title; the zod form of the schema checks calls before they are sent,
 * and where it cannot be built (a schema zod cannot read) the server is left to check them.
 */
export function mcpTool(source: McpToolSource, tool: Tool, name: string): ToolDefinition {
  const inputSchema = { ...tool.inputSchema, properties: tool.inputSchema.properties ?? {} } as JSONSchema7
  const title = tool.title ?? tool.annotations?.title
  const about = tool.description ?? `${tool.name} (MCP server ${source.server})`
  return defineTool({
    id: name,
    description: title && title !== about ? `${title}: ${about}` : about,
    parameters: checker(inputSchema),
    inputSchema,
    readOnly: tool.annotations?.readOnlyHint === true,
    // The arguments, so a rule can tell calls apart and an owner asked to allow one sees what it does.
    pattern: (args) => JSON.stringify(args).slice(0, PATTERN_CHARS),
    // What a server answers is outside content; only a tool it declares read-only may run
    // unasked once the run has read such content.
    untrustedOutput: true,
    ...(tool.annotations?.readOnlyHint !== true && { guardedWhenTainted: true as const }),
    async execute(args, ctx) {
      const done = await source.calls.enter(ctx, () => ctx.progress?.(`waiting: MCP server "${source.server}" is busy with another conversation's calls`))
      try {
        const result = await callOnce(source, tool, name, args as Record<string, unknown>, ctx)
        const output = await formatResult(result, { server: source.server, ctx })
        if (result.isError) throw new ToolError(`${name} reported an error: ${output.text}`)
        return output
      } finally {
        done()
      }
    },
  })
}

async function callOnce(source: McpToolSource, tool: Tool, name: string, args: Record<string, unknown>, ctx: ToolContext, retried = false): Promise<CallToolResult> {
  const shown = pacedProgress((text) => ctx.progress?.(text))
  const silence = silenceTimer(source)
  try {
    await source.beforeCall(ctx)
    // A progress token is sent with every call; each report restarts the silence count. The
    // SDK's own limit is the hard maximum.
    return (await source.client().callTool({ name: tool.name, arguments: args }, undefined, {
      timeout: source.maxMs,
      onprogress: (progress) => {
        silence.heard()
        shown.report(progress)
      },
      signal: AbortSignal.any([ctx.abort, silence.signal]),
    })) as CallToolResult
  } catch (error) {
    ctx.abort.throwIfAborted()
    if (error instanceof ToolError) throw new ToolError(`${name}: ${error.message}`)
    // A server restarted while idle no longer knows the session (404): the call never reached
    // it, and a new session may. A request that got no response at all may have reached it, so
    // only a tool that says repeating it is harmless (read-only, idempotent) is tried again then.
    const sessionLost = error instanceof StreamableHTTPError && error.code === 404
    const unanswered = error instanceof TypeError && error.message === "fetch failed" && (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true)
    if (!retried && (sessionLost || unanswered)) {
      await source.reconnect()
      return callOnce(source, tool, name, args, ctx, true)
    }
    const silent = silence.signal.aborted
    const overMax = error instanceof McpError && error.code === ErrorCode.RequestTimeout
    if (silent || overMax || !(error instanceof McpError)) source.onUnanswered(error)
    if (silent) throw new ToolError(`${name} did not answer within ${source.timeoutMs / 1000} s (MCP_TOOL_TIMEOUT); the call was cancelled`)
    if (overMax) throw new ToolError(`${name} was still running after ${source.maxMs / 1000} s (MCP_TOOL_MAX_SECONDS); the call was cancelled`)
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) throw new ToolError(`${name} failed: ${error.message}`)
    const down = source.whyDown()
    throw new ToolError(down ? `${name}: the connection was lost during the call; ${down}` : `${name}: MCP server "${source.server}" could not be reached: ${messageOf(error)}`)
  } finally {
    shown.stop()
    silence.stop()
  }
}

/**
 * MCP_TOOL_TIMEOUT as a call's silence: aborts the call when the server has neither answered
 * nor reported progress for that long — not counting the time it waits for Steward (a question
 * to the user may take MCP_ELICITATION_TIMEOUT, a sampling request the model's time).
 */
function silenceTimer(source: McpToolSource): { signal: AbortSignal; heard(): void; stop(): void } {
  const controller = new AbortController()
  let heardAt = Date.now()
  let timer: NodeJS.Timeout | undefined
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      const quiet = source.calls.quiet(heardAt)
      if (quiet >= source.timeoutMs) controller.abort(new Error(`no answer within ${source.timeoutMs / 1000} s`))
      else arm(source.timeoutMs - quiet)
    }, ms)
  }
  arm(source.timeoutMs)
  return {
    signal: controller.signal,
    heard: () => void (heardAt = Date.now()),
    stop: () => clearTimeout(timer),
  }
}

function checker(schema: JSONSchema7): z.ZodType {
  try {
    return z.fromJSONSchema(schema as never)
  } catch {
    return z.record(z.string(), z.unknown())
  }
}
