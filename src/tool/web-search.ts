import { z } from "zod"
import { incident } from "../core/errors.ts"
import { SearchError } from "../search/http.ts"
import type { SearchProvider } from "../search/result.ts"
import { defineTool, ToolError } from "./tool.ts"

export const WEB_SEARCH = "web_search"
const DEFAULT_LIMIT = 5
const MAX_LIMIT = 20

const parameters = z.object({
  query: z.string().trim().min(1).describe("What to search the web for."),
  limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`How many results to return (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`),
})

/** web_search through the configured provider; offered only when there is one. */
export function createWebSearchTool(provider: SearchProvider) {
  return defineTool({
    id: WEB_SEARCH,
    description:
      "Search the web. Returns a list of results, each with title, url and snippet; fetch a result's URL " +
      "with fetch_url (workers) to read it in full.",
    parameters,
    pattern: (args) => args.query,
    untrustedOutput: true,
    async execute({ query, limit = DEFAULT_LIMIT }, ctx) {
      try {
        return await provider.search(query, limit, ctx.abort)
      } catch (error) {
        if (!(error instanceof SearchError)) throw error
        if (!error.detail) throw new ToolError(error.message)
        throw new ToolError(`${error.message} (what it said is in the log under reference ${incident(ctx.incidents, error.detail, "a web search failed")})`)
      }
    },
  })
}
