import type { z } from "zod"
import type { Services } from "./services.ts"

/** The three agent roles of Steward. Each runs the same agent loop with its own prompt and tools. */
export type Role = "teller" | "planner" | "worker"

/** What a tool sees of the run that called it. */
export interface ToolContext {
  role: Role
  /** Worker type (e.g. "default") for workers; the role name otherwise. */
  agent: string
  conversation: string
  user: string
  sessionId: string
  /** The model's tool call id. Together with sessionId it is the idempotency key of the call:
   *  a call re-executed after a crash must not repeat its side effect. */
  callId: string
  /** The task this run executes (planner and worker runs). */
  taskId?: string
  abort: AbortSignal
  services: Services
}

/**
 * Returned by a tool whose answer comes later, from outside the run (ask_user): the run ends at
 * that call, which stays unanswered in the log. When the run is resumed the call executes again
 * and, its answer being known by then, returns it as the call's result.
 */
export const AWAIT_ANSWER: unique symbol = Symbol("await answer")

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
