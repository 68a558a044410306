import { z } from "zod"
import { queryWords } from "../memory/text.ts"
import { parseRange } from "./iso-date.ts"
import { defineTool, ToolError } from "./tool.ts"

const MAX_LIMIT = 50

const parameters = z.object({
  query: z.string().describe("Words to look for, in any language (English and German are stemmed, German compounds split, Chinese and Japanese segmented); small typos are tolerated"),
  after: z.string().optional().describe("ISO 8601 date or date-time; only notes dated on or after it"),
  before: z.string().optional().describe("ISO 8601 date or date-time; only notes dated on or before it"),
  limit: z.number().int().optional().describe(`Number of hits, 1-${MAX_LIMIT}, default 5`),
})

export const searchMemoryTool = defineTool({
  id: "search_memory",
  description:
    "Search the user's memory notes (full text, BM25; with an embedding model configured, also by meaning). A note's date is its day: the daily note's date, or the entry date in memory.md; after/before are inclusive. " +
    "Returns {hits: [{source, date, content, score, supersededBy?}]}, best first, and among about equally good matches the newest first; content is the matching passage, at most 300 characters. " +
    "Facts change (a move, a new job, a new number): a note that states a newer value comes before the one it replaced, which carries supersededBy (the newer note's source) and is history. " +
    "For what was true at a time (\"where did we live in 2024\"), pass after/before: the newest note inside the window is the fact of that time.",
  parameters,
  // Notes were written by a model, and past talk quotes what it read: data, not instructions.
  untrustedOutput: true,
  async execute({ query, after, before, limit = 5 }, ctx) {
    if (query.trim() === "") throw new ToolError("query is empty")
    if (queryWords(query).length === 0) throw new ToolError(`query "${query}" has no searchable words (only stop words or punctuation)`)
    if (limit < 1 || limit > MAX_LIMIT) throw new ToolError(`limit must be between 1 and ${MAX_LIMIT}, got ${limit}`)
    const range = parseRange(after, before)
    return { hits: await ctx.memory.search(ctx.user, { query, ...range, limit }) }
  },
})
