import type { z } from "zod"
import type { Role } from "../core/types.ts"
import type { Caller, Capabilities } from "./capabilities.ts"

/** What a tool sees of the run that called it: who calls, and the capabilities it may use. */
export interface ToolContext extends Caller, Capabilities {}

/** One tool: schema, description and execute live together (one tool per file). */
export interface ToolDefinition<P extends z.ZodType = z.ZodType> {
  id: string
  description: string
  parameters: P
  /** The value permission rules match against (a path, a URL, a worker type). Default "*". */
  pattern?: (args: z.infer<P>, role: Role) => string
  execute: (args: z.infer<P>, ctx: ToolContext) => Promise<unknown>
}

export function defineTool<P extends z.ZodType>(def: ToolDefinition<P>): ToolDefinition<P> {
  return def
}

/** A failure the model should read and act on; its message is returned as the tool's error. */
export class ToolError extends Error {
  override name = "ToolError"
}
