import { z } from "zod"
import { defineTool } from "./tool.ts"

export const replyTool = defineTool({
  id: "reply",
  description: "Send a message to the user in this chat. Markdown is allowed. Returns nothing.",
  parameters: z.object({ text: z.string().trim().min(1).max(100_000).describe("The message") }),
  async execute(args, ctx) {
    await ctx.replies.reply(ctx, args.text)
    return null
  },
})
