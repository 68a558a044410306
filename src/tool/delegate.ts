import { z } from "zod"
import { delegateTarget, refusal } from "../permission/roles.ts"
import { Condition } from "../schedule/condition.ts"
import { taintedPrompt } from "../trust/taint.ts"
import { defineTool, ToolError, type ToolDefinition } from "./tool.ts"

export interface WorkerType {
  name: string
  description: string
}

const DESCRIPTION = `Delegate work and return at once with {taskId}; the result comes back later.
From the Teller: hands the request to the Planner (prompt and timeout only; the Planner does not see the chat, so make the prompt self-contained).
From the Planner: dispatches a Worker. Worker tasks are committed only when your run ends successfully — all of them or none. Set priority (0-10, higher runs first, default 5) and timeout in seconds (null: the role's default).
A "conditional" task waits until its condition holds: {kind:"task", taskId, status?: "completed"|"failed"|"any"} (a task id you got from delegate, also in this run), {kind:"time", at}, {kind:"event", name}, {kind:"all"|"any", of:[...]}. One that can never hold is cancelled. It reports on its own when it ends, not with the rest of this run's tasks.
Pass session_id (from an earlier result's <task_metadata>) to continue that task's session with its history instead of starting fresh.

Available worker types:
{agents}`

const parameters = z
  .object({
    prompt: z.string().trim().min(1).describe("The task, complete and self-contained"),
    type: z.enum(["oneshot", "conditional"]).optional().describe('Default "oneshot". Planner only'),
    condition: Condition.optional().describe('Required when type is "conditional". Planner only'),
    priority: z.number().int().min(0).max(10).optional().describe("0-10, higher first, default 5. Planner only"),
    timeout: z.number().int().positive().max(86_400).nullable().optional().describe("Seconds; null or absent: the role's default"),
    worker: z.string().optional().describe("Worker type (default: default). Planner only"),
    session_id: z.string().optional().describe("Continue this earlier task session"),
  })
  .refine((args) => args.type !== "conditional" || args.condition !== undefined, {
    message: 'type "conditional" needs a condition',
    path: ["condition"],
  })

/** The worker types are listed in the description (seed 000's {agents}), so it is built per configuration. */
export function createDelegateTool(workers: readonly WorkerType[]): ToolDefinition<typeof parameters> {
  return defineTool({
    id: "delegate",
    description: DESCRIPTION.replace("{agents}", workers.map((w) => `- ${w.name}: ${w.description}`).join("\n")),
    parameters,
    // The rules match the target: "planner" for a role that hands work to the Planner, else the worker type.
    pattern: (args, role) => (delegateTarget(role) === "planner" ? "planner" : (args.worker ?? "default")),
    async execute(args, ctx) {
      const shaping = (["type", "condition", "priority", "worker"] as const).filter((field) => args[field] !== undefined)
      const refused = refusal(ctx.role, "delegate") ?? (shaping.length > 0 ? refusal(ctx.role, "shape_tasks", shaping.join(", ")) : undefined)
      if (refused) throw new ToolError(refused)
      if (args.worker !== undefined && !workers.some((w) => w.name === args.worker)) {
        throw new ToolError(`Unknown worker type "${args.worker}". Available: ${workers.map((w) => w.name).join(", ")}.`)
      }
      return ctx.tasks.delegate(ctx, {
        prompt: ctx.tainted ? taintedPrompt(args.prompt) : args.prompt,
        type: args.type ?? "oneshot",
        condition: args.condition,
        priority: args.priority ?? 5,
        timeout: args.timeout ?? null,
        worker: args.worker,
        sessionId: args.session_id,
      })
    },
  })
}
