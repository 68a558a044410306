import { z } from "zod"
import { defineTool } from "./tool.ts"

export const listTasksTool = defineTool({
  id: "list_tasks",
  description:
    'List this conversation\'s tasks that are not finished: "queue" (waiting), "running", "triggers" (schedules) or "all" (default). role filters queue/running by planner or worker.',
  parameters: z.object({
    scope: z.enum(["queue", "running", "triggers", "all"]).optional(),
    role: z.enum(["planner", "worker"]).optional(),
  }),
  async execute(args, ctx) {
    return { tasks: await ctx.tasks.listTasks(ctx, { scope: args.scope ?? "all", role: args.role }) }
  },
})
