import { z } from "zod"
import { defineTool } from "./tool.ts"

/** Finished tasks per page at most: a year of them must not flood a prompt. */
export const MAX_PAGE = 100
export const DEFAULT_PAGE = 20

export const listTasksTool = defineTool({
  id: "list_tasks",
  description:
    'List this conversation\'s tasks that are not finished: "queue" (waiting), "running", "triggers" (schedules) or "all" (default). role filters queue/running by planner or worker. "finished" lists ended tasks, newest first, `limit` per page (default 20); pass the last one\'s endedAt as `before` for the next page.',
  parameters: z.object({
    scope: z.enum(["queue", "running", "triggers", "all", "finished"]).optional(),
    role: z.enum(["planner", "worker"]).optional(),
    limit: z.number().int().min(1).max(MAX_PAGE).optional(),
    before: z.iso.datetime({ offset: true }).optional(),
  }),
  async execute(args, ctx) {
    return { tasks: await ctx.tasks.listTasks(ctx, { scope: args.scope ?? "all", role: args.role, limit: args.limit, before: args.before }) }
  },
})
