import type { JSONSchema7 } from "ai"
import { z } from "zod"
import type { Role } from "../core/types.ts"
import type { MessageRecord } from "../store/records.ts"
import type { CallCapabilities, Caller, Capabilities } from "./capabilities.ts"

/** What a tool sees of the run that called it: who calls, and the capabilities it may use. */
export interface ToolContext extends Caller, Capabilities, CallCapabilities {}

/** One tool: schema, description and execute live together (one tool per file). */
export interface ToolDefinition<P extends z.ZodType = z.ZodType> {
  id: string
  description: string
  parameters: P
  /** The value permission rules match against (a path, a URL, a worker type). Default "*". */
  pattern?: (args: z.infer<P>, role: Role) => string
  execute: (args: z.infer<P>, ctx: ToolContext) => Promise<unknown>
  /** Shown to the model instead of the JSON Schema of `parameters`, when the tool came with
   *  its own (an MCP server's); `parameters` then only checks the calls. */
  inputSchema?: JSONSchema7
  /** What the tool returns (or the error it reports) is outside content — a page, a file, a
   *  server's answer: the loop hands it to the model in an envelope (src/trust/envelope.ts),
   *  which taints the run. */
  untrustedOutput?: true
  /** The call moves data out or changes what lasts (memory, schedules, a file sent, an outside
   *  service): in a run that has read untrusted content it needs the `tainted:<id>` rule, by
   *  default the user's approval (src/trust/taint.ts). A function decides per call, knowing
   *  what the run has read (its session's records). */
  guardedWhenTainted?: true | ((args: z.infer<P>, ctx: ToolContext, read: readonly MessageRecord[]) => boolean | Promise<boolean>)
  /** Set on a family's stand-in (see toolFamily): the tools it stands for at this moment. */
  members?: () => readonly ToolDefinition[]
  /** Set on a family's stand-in: settles once a change of its members under way is known (a
   *  server re-listing its tools), so the next step offers the new set. */
  settled?: () => Promise<void>
  /** MCP tool annotations: true when the tool says it changes nothing (`readOnlyHint`), for the
   *  rules on untrusted content. Unset: not known to be read-only. */
  readOnly?: boolean
}

export function defineTool<P extends z.ZodType>(def: ToolDefinition<P>): ToolDefinition<P> {
  return def
}

/** A failure the model should read and act on; its message is returned as the tool's error. */
export class ToolError extends Error {
  override name = "ToolError"
}

/**
 * A stand-in for tools that come and go while Steward runs (an MCP server's). It travels in the
 * tool list like one tool, under a wildcard id (`github_*`), so the role rules and a worker
 * type's `tools` list hide or keep the family as a whole the way they do a single tool; the
 * agent loop then offers, at each step, the members `current()` returns — each
 * still checked by the rules under its own name. The stand-in itself is never offered.
 */
export function toolFamily(id: string, current: () => readonly ToolDefinition[], settled?: () => Promise<void>): ToolDefinition {
  return {
    id,
    description: `The tools ${id}`,
    parameters: z.object({}),
    members: current,
    settled,
    execute: () => Promise.reject(new Error(`${id} is a family of tools, not a tool: the agent loop offers its members`)),
  }
}
