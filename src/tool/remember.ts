import { z } from "zod"
import { defineTool, ToolError } from "./tool.ts"

/** A note is a fact or a summary, not a document; longer text belongs in a file. */
const MAX_NOTE_CHARS = 20_000

const parameters = z.object({
  content: z.string().describe("What to remember, self-contained (who, what, when) so it makes sense when found later"),
  longTerm: z.boolean().optional().describe("true: a lasting fact or preference, kept in memory.md; false (default): a dated note of today"),
})

export const rememberTool = defineTool({
  id: "remember",
  description:
    "Save something to this user's memory (Markdown notes the Planner can search later). " +
    "By default it becomes today's note memory/YYYY-MM-DD-<slug>.md; with longTerm it is appended to memory.md under today's date. " +
    "Returns the note's path.",
  parameters,
  guardedWhenTainted: true,
  async execute({ content, longTerm = false }, ctx) {
    if (content.trim() === "") throw new ToolError("content is empty: say what to remember")
    if (content.length > MAX_NOTE_CHARS) throw new ToolError(`content is ${content.length} characters; a note holds at most ${MAX_NOTE_CHARS}`)
    return ctx.memory.remember(ctx.user, content, longTerm)
  },
})
