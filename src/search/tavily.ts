import { z } from "zod"
import { requestJson } from "./http.ts"
import { plain, type SearchProvider } from "./result.ts"

const Answer = z.object({
  results: z.array(z.object({ title: z.string().default(""), url: z.string(), content: z.string().nullish() })),
})

/** Tavily: POST <apiUrl> {query, max_results}, key as a bearer token. */
export function tavily(apiKey: string, apiUrl: string, timeoutMs: number): SearchProvider {
  return {
    name: "tavily",
    async search(query, limit, signal) {
      const init = {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ query, max_results: limit }),
      }
      const answer = await requestJson("tavily", new URL(apiUrl), init, Answer, signal, timeoutMs)
      return answer.results.slice(0, limit).map((hit) => ({ title: plain(hit.title), url: hit.url, snippet: plain(hit.content ?? "") }))
    },
  }
}
