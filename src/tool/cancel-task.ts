import { z } from "zod"
import { defineTool } from "./tool.ts"

export const cancelTaskTool = defineTool({
  id: "cancel_task",
  description: "Cancel a queued task of this conversation (or remove a trigger). A running task is not affected. Returns {success}.",
  parameters: z.object({ taskId: z.string().min(1).describe("The id, or a unique prefix of at least 4 characters") }),
  // Removing a schedule is for good: a run steered by what it read asks first.
  guardedWhenTainted: true,
  async execute(args, ctx) {
    return { success: await ctx.tasks.cancelTask(ctx, args.taskId) }
  },
})
