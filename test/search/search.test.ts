import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/config/config.ts"
import { REDACTED, redactor, secretsOf } from "../../src/log/redact.ts"
import { searchProvider } from "../../src/search/provider.ts"
import { createWebSearchTool } from "../../src/tool/web-search.ts"
import { ToolError } from "../../src/tool/tool.ts"
import { SEARCH_KEY, startSearchApi, type FakeSearchApi } from "../fakes/search-api.ts"
import { callTool } from "../mcp/support.ts"
import { deflatedZeros } from "../files/bombs.ts"
import { MAX_SEARCH_RESPONSE_BYTES } from "../../src/untrusted/limits.ts"

let api: FakeSearchApi
beforeAll(async () => void (api = await startSearchApi()))
afterAll(() => api.close())

const base = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "k" }
const envs = () => ({
  searxng: { SEARCH_PROVIDER: "searxng", SEARXNG_URL: api.url },
  brave: { SEARCH_PROVIDER: "brave", BRAVE_API_KEY: SEARCH_KEY, BRAVE_API_URL: `${api.url}/brave/web/search` },
  tavily: { SEARCH_PROVIDER: "tavily", TAVILY_API_KEY: SEARCH_KEY, TAVILY_API_URL: `${api.url}/tavily/search` },
})
const TIMEOUT_MS = 300
const toolFor = (env: Record<string, string>) => createWebSearchTool(searchProvider(loadConfig({ ...base, ...env }).search, TIMEOUT_MS)!)

describe.each(["searxng", "brave", "tavily"] as const)("web_search through %s", (provider) => {
  it("returns title, url and snippet of each hit, as plain text, at most `limit`", async () => {
    api.failWith(undefined)
    const results = await callTool(toolFor(envs()[provider]), { query: "cats", limit: 2 })
    expect(results).toEqual([
      { title: "cats result 1", url: "https://example.com/cats/1", snippet: "About cats & more, part 1." },
      { title: "cats result 2", url: "https://example.com/cats/2", snippet: "About cats & more, part 2." },
    ])
    const search = api.searches.at(-1)!
    expect(search).toMatchObject({ provider, query: "cats" })
    if (provider !== "searxng") expect(search.limit).toBe(2)
  })

  it.each([
    [{ status: 429, headers: { "retry-after": "30" }, body: "slow down" }, /rate limited.*try again in 30 s/],
    [{ status: 503, body: "maintenance: upstream llm-gw-07.corp.internal:8443 failed: db password rejected" }, /failed on its side \(HTTP 503\); try again later \(what it said is in the log under reference ref-\w+\)$/],
    [{ status: 403, body: "forbidden" }, /refused the request.*HTTP 403/],
    ["bad-json" as const, /not JSON \(text\/html\)/],
  ])("reports %j as a tool error the model can read", async (failure, message) => {
    api.failWith(failure)
    const logged: unknown[] = []
    const error = await callTool(toolFor(envs()[provider]), { query: "dogs" }, undefined, { incidents: { error: (fields: unknown) => void logged.push(fields) } as never }).catch((e) => e)
    api.failWith(undefined)
    expect(error).toBeInstanceOf(ToolError)
    expect(error.message).toMatch(message)
    expect(error.message).toContain(provider)
    // What the API said stays in the log: it may name the owner's internal hosts and accounts.
    expect(error.message).not.toContain("llm-gw-07")
    if (typeof failure === "object" && failure.status === 503) expect(JSON.stringify(logged)).toContain("db password rejected")
  })
})

it("refuses a search answer that inflates past its limit (a gzip bomb) without reading it all", async () => {
  const bomb = await deflatedZeros(200 * 1024 * 1024, { format: "gzip", fill: 0x20 })
  const server = createServer((_req, res) => void res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(bomb))
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  try {
    const tool = createWebSearchTool(searchProvider(loadConfig({ ...base, SEARCH_PROVIDER: "searxng", SEARXNG_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }).search, 10_000)!)
    const before = process.memoryUsage.rss()
    const error = await callTool(tool, { query: "cats" }).catch((e) => e)
    expect(error).toBeInstanceOf(ToolError)
    expect(error.message).toBe(`searxng search answered with more than ${MAX_SEARCH_RESPONSE_BYTES / 1024 / 1024} MiB, which no search result needs; not read`)
    expect(process.memoryUsage.rss() - before).toBeLessThan(100 * 1024 * 1024)
  } finally {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
}, 30_000)

it("reaches a SearXNG behind a password in SEARXNG_URL with a Basic header; the password is in no URL, error or log line", async () => {
  const PASSWORD = "s3cret pw/+"
  const seen: Array<{ url?: string; authorization?: string }> = []
  const server = createServer((req, res) => {
    seen.push({ url: req.url, authorization: req.headers.authorization })
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results: [{ title: "t", url: "https://example.com", content: "c" }] }))
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  try {
    const env = { ...base, SEARCH_PROVIDER: "searxng", SEARXNG_URL: `http://steward:${encodeURIComponent(PASSWORD)}@127.0.0.1:${(server.address() as AddressInfo).port}` }
    const config = loadConfig(env)
    expect(await callTool(createWebSearchTool(searchProvider(config.search, 1000)!), { query: "cats" })).toHaveLength(1)
    expect(seen).toEqual([{ url: "/search?q=cats&format=json", authorization: `Basic ${Buffer.from(`steward:${PASSWORD}`).toString("base64")}` }])
    const redact = redactor(secretsOf(config))
    expect(redact(`${env.SEARXNG_URL} ${PASSWORD} ${seen[0]!.authorization}`)).toBe(`http://steward:${REDACTED}@127.0.0.1:${(server.address() as AddressInfo).port} ${REDACTED} Basic ${REDACTED}`)
  } finally {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  }
})

it("reports a search API that cannot be reached", async () => {
  const gone = await startSearchApi()
  await gone.close()
  const tool = toolFor({ SEARCH_PROVIDER: "searxng", SEARXNG_URL: gone.url })
  await expect(callTool(tool, { query: "x" })).rejects.toThrow(/^searxng search could not be reached \(ECONNREFUSED\) \(what it said is in the log under reference ref-\w+\)$/)
})

it("reports a search that does not answer in time", async () => {
  api.failWith("hang")
  await expect(callTool(toolFor(envs().searxng), { query: "x" })).rejects.toThrow(/searxng search did not answer within 0.3 s; try again later/)
  api.failWith(undefined)
})

it("gives up on a search that hangs when the run is cancelled, as the run's abort", async () => {
  api.failWith("hang")
  const abort = new AbortController()
  const pending = callTool(toolFor(envs().brave), { query: "x" }, abort.signal)
  await new Promise((resolve) => setTimeout(resolve, 50))
  abort.abort(new Error("run cancelled"))
  await expect(pending).rejects.toThrow("run cancelled")
  api.failWith(undefined)
})

it("says a wrong key is refused", async () => {
  const tool = toolFor({ ...envs().tavily, TAVILY_API_KEY: "wrong" })
  await expect(callTool(tool, { query: "x" })).rejects.toThrow(/tavily search refused the request.*HTTP 401/)
})
