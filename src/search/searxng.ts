import { z } from "zod"
import { basicCredentials } from "../log/redact.ts"
import { requestJson } from "./http.ts"
import { plain, type SearchProvider } from "./result.ts"

const Answer = z.object({
  results: z.array(z.object({ title: z.string().default(""), url: z.string(), content: z.string().nullish() })),
})

/** A SearXNG instance's JSON API (GET /search?q=…&format=json; the instance must allow the json format). */
export function searxng(baseUrl: string, timeoutMs: number): SearchProvider {
  // An instance behind a password is written https://user:password@host/: fetch refuses a URL
  // with credentials (naming it, password and all, in its error), so they go in a header.
  const base = new URL(baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`)
  const headers: Record<string, string> = { accept: "application/json" }
  if (base.username || base.password) headers.authorization = `Basic ${basicCredentials(decodeURIComponent(base.username), decodeURIComponent(base.password))}`
  base.username = ""
  base.password = ""
  return {
    name: "searxng",
    async search(query, limit, signal) {
      const url = new URL("search", base)
      url.searchParams.set("q", query)
      url.searchParams.set("format", "json")
      const answer = await requestJson("searxng", url, { headers }, Answer, signal, timeoutMs)
      // SearXNG has no result count parameter: it returns a page, which is cut here.
      return answer.results.slice(0, limit).map((hit) => ({ title: plain(hit.title), url: hit.url, snippet: plain(hit.content ?? "") }))
    },
  }
}
