import { z } from "zod"
import { toMessages } from "./history.ts"
import { defineTool, ToolError } from "./tool.ts"

const MAX_COUNT = 200

const parameters = z.object({
  count: z.number().int().describe(`How many messages, 1-${MAX_COUNT} (clamped)`),
  offset: z.number().int().optional().describe("How many of the newest messages to skip first (default 0), to page further back"),
})

export const getRecentHistoryTool = defineTool({
  id: "get_recent_history",
  description:
    "Read this conversation's chat history: the `count` messages before the newest `offset` ones, oldest first. " +
    "Returns {messages: [{role, text, createdAt}]}.",
  parameters,
  async execute({ count, offset = 0 }, ctx) {
    if (offset < 0) throw new ToolError(`offset must be 0 or more, got ${offset}`)
    const clamped = Math.min(MAX_COUNT, Math.max(1, count))
    return toMessages(await ctx.history.recent(ctx.conversation, clamped, offset))
  },
})
