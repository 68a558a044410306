/**
 * Fake web search APIs on 127.0.0.1, one server for all three providers:
 * SearXNG  GET  /search?q=…&format=json          → {results: [{title, url, content}]}
 * Brave    GET  /brave/web/search?q=…&count=…   → {web: {results: [{title, url, description}]}}, needs X-Subscription-Token
 * Tavily   POST /tavily/search {query, max_results} → {results: [{title, url, content}]}, needs Authorization: Bearer
 * `failWith` makes the next answers an error status, a body that is not JSON, or a hang.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

export const SEARCH_KEY = "search-key"

export type Failure = { status: number; headers?: Record<string, string>; body?: string } | "bad-json" | "hang"

export interface RecordedSearch {
  provider: "searxng" | "brave" | "tavily"
  query: string
  /** count (Brave) or max_results (Tavily). */
  limit?: number
  headers: IncomingMessage["headers"]
}

export interface FakeSearchApi {
  url: string
  searches: RecordedSearch[]
  failWith(failure: Failure | undefined): void
  close(): Promise<void>
}

/** Three hits per query; each title names the query so a test can follow it into an answer. */
export function hitsFor(query: string) {
  return [1, 2, 3].map((n) => ({ title: `<strong>${query}</strong> result ${n}`, url: `https://example.com/${encodeURIComponent(query)}/${n}`, text: `About ${query} &amp; more, part ${n}.` }))
}

export async function startSearchApi(): Promise<FakeSearchApi> {
  const searches: RecordedSearch[] = []
  let failure: Failure | undefined
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, "http://127.0.0.1")
    let body = ""
    for await (const chunk of req) body += chunk
    if (failure === "hang") return
    if (failure === "bad-json") return void res.writeHead(200, { "content-type": "text/html" }).end("<html>not json</html>")
    if (failure) return void res.writeHead(failure.status, failure.headers).end(failure.body ?? "")
    const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value))
    if (req.method === "GET" && url.pathname === "/search" && url.searchParams.get("format") === "json") {
      const query = url.searchParams.get("q") ?? ""
      searches.push({ provider: "searxng", query, headers: req.headers })
      return json({ query, results: hitsFor(query).map((hit) => ({ title: hit.title, url: hit.url, content: hit.text, engine: "fake" })) })
    }
    if (req.method === "GET" && url.pathname === "/brave/web/search") {
      if (req.headers["x-subscription-token"] !== SEARCH_KEY) return void res.writeHead(401).end('{"error":"bad token"}')
      const query = url.searchParams.get("q") ?? ""
      searches.push({ provider: "brave", query, limit: Number(url.searchParams.get("count")), headers: req.headers })
      return json({ type: "search", web: { results: hitsFor(query).map((hit) => ({ title: hit.title, url: hit.url, description: hit.text })) } })
    }
    if (req.method === "POST" && url.pathname === "/tavily/search") {
      if (req.headers.authorization !== `Bearer ${SEARCH_KEY}`) return void res.writeHead(401).end('{"detail":"bad key"}')
      const { query, max_results } = JSON.parse(body) as { query: string; max_results: number }
      searches.push({ provider: "tavily", query, limit: max_results, headers: req.headers })
      return json({ query, results: hitsFor(query).map((hit) => ({ title: hit.title, url: hit.url, content: hit.text, score: 0.9 })) })
    }
    res.writeHead(404).end("not found")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    searches,
    failWith: (next) => void (failure = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
