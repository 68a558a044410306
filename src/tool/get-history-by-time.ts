import { z } from "zod"
import { toMessages } from "./history.ts"
import { parseRange } from "./iso-date.ts"
import { defineTool } from "./tool.ts"

const parameters = z.object({
  after: z.string().describe("ISO 8601 date or date-time, inclusive; a bare date starts at its local midnight"),
  before: z.string().optional().describe("ISO 8601 date or date-time, inclusive (default now); a bare date includes that whole day"),
})

export const getHistoryByTimeTool = defineTool({
  id: "get_history_by_time",
  description: "Read this conversation's chat messages sent between after and before (both inclusive), oldest first. Returns {messages: [{role, text, createdAt}]}.",
  parameters,
  async execute({ after, before }, ctx) {
    const range = parseRange(after, before)
    return toMessages(await ctx.history.between(ctx.conversation, range.after!, range.before ?? new Date()))
  },
})
