import { z } from "zod"
import { defineTool, ToolError } from "./tool.ts"

const parameters = z.object({
  query: z.string().optional().describe('Text to find (case-insensitive, at least 3 characters), e.g. "Berlin": every note line containing it is removed or rewritten'),
  path: z.string().optional().describe('Instead of query: one note to remove whole (or rewrite), e.g. "memory.md" or "memory/2026-03-01-cat.md"'),
  replacement: z.string().optional().describe('What the removed text becomes, when the user corrects rather than forgets (e.g. "The user lives in Munich.")'),
})

export const forgetTool = defineTool({
  id: "forget",
  description:
    'Correct or remove what is remembered about this user ("forget that I live in Berlin", "I moved to Munich"). ' +
    "With query, every line of memory.md and the daily notes that contains it is removed — or, with replacement, rewritten to that text (once per note); " +
    "with path, that whole note is removed or rewritten. Empty dated sections and empty notes go too. " +
    "Returns {changes: [{path, removed, added?, deleted?, chain?}]}; tell the user what changed (an empty list: nothing matched). " +
    "chain: the note stated a fact that changed (an address, a number…): the notes that stated it, oldest first, the last was current; forgetting the current one makes the one before it current again.",
  parameters,
  guardedWhenTainted: true,
  async execute(args, ctx) {
    const result = await ctx.notes.forget(ctx.user, args)
    if ("error" in result) throw new ToolError(result.error)
    return result
  },
})
