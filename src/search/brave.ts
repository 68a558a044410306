import { z } from "zod"
import { requestJson } from "./http.ts"
import { plain, type SearchProvider } from "./result.ts"

const Answer = z.object({
  // A query with no web results has no `web` section at all.
  web: z.object({ results: z.array(z.object({ title: z.string().default(""), url: z.string(), description: z.string().nullish() })) }).optional(),
})

// The API's own ceiling for `count`.
const MAX_COUNT = 20

/** Brave Search API: GET <apiUrl>?q=…&count=…, key in X-Subscription-Token. */
export function brave(apiKey: string, apiUrl: string, timeoutMs: number): SearchProvider {
  return {
    name: "brave",
    async search(query, limit, signal) {
      const url = new URL(apiUrl)
      url.searchParams.set("q", query)
      url.searchParams.set("count", String(Math.min(limit, MAX_COUNT)))
      const answer = await requestJson("brave", url, { headers: { accept: "application/json", "x-subscription-token": apiKey } }, Answer, signal, timeoutMs)
      return (answer.web?.results ?? []).slice(0, limit).map((hit) => ({ title: plain(hit.title), url: hit.url, snippet: plain(hit.description ?? "") }))
    },
  }
}
