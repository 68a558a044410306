/**
 * fetch_url against hostile URLs and pages: no loopback, private, link-local, CGNAT, unique-local,
 * multicast, unspecified or other non-public address in any spelling, directly or by redirect;
 * a bounded body; a timeout that fires; HTML conversion that never stalls the event loop.
 *
 * Nothing here sends traffic anywhere but 127.0.0.1: refused addresses are refused before any
 * connection, names are resolved by a stub, and "public" addresses are only ever classified.
 */
import type { LookupAddress } from "node:dns"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { brotliCompressSync, gzipSync, constants as zlibConstants } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { z } from "zod"
import { ConfigError, loadConfig } from "../../src/config/config.ts"
import { createFetchUrlTool, type FetchUrlSettings } from "../../src/tool/fetch-url.ts"
import { deflatedZeros } from "../files/bombs.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { ToolError, type ToolContext, type ToolDefinition } from "../../src/tool/tool.ts"
import { AddressPolicy, allowHostsSchema, nonPublicRange } from "../../src/web/address-policy.ts"
import type { Resolve } from "../../src/web/guarded-fetch.ts"

const ctx: ToolContext = { role: "worker", agent: "default", conversation: "conv", user: "user", sessionId: "s", callId: "c", abort: new AbortController().signal, ...({ workspaceDir: tmpdir() } as Capabilities) }
const run = <P extends z.ZodType>(tool: ToolDefinition<P>, args: unknown): Promise<any> => tool.execute(tool.parameters.parse(args), ctx)

describe("address classification (ipaddr.js ranges)", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.1", "loopback"],
    ["2130706433", "loopback"],
    ["0x7f000001", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.1", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::7f00:1", "not global unicast"],
    ["64:ff9b::a00:1", "private"],
    ["64:ff9b::127.0.0.1", "loopback"],
    ["64:ff9b:1::a00:1", "private"],
    ["2002:a00:1::1", "6to4"],
    ["2001::1", "teredo"],
    ["2001:db8::1", "reserved"],
  ])("refuses %s (%s)", (address, range) => {
    expect(nonPublicRange(address)).toBe(range)
  })

  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"])("lets the public address %s through", (address) => {
    expect(nonPublicRange(address)).toBeUndefined()
  })

  it("refuses names that always mean this machine, and literal addresses, before any lookup", () => {
    const policy = new AddressPolicy()
    for (const host of ["localhost", "LOCALHOST.", "api.localhost", "127.0.0.1", "[::1]", "[::ffff:7f00:1]", "0.0.0.0"]) expect(policy.hostRefusal(host), host).toBeDefined()
    expect(policy.hostRefusal("example.com")).toBeUndefined()
    expect(policy.hostRefusal("8.8.8.8")).toBeUndefined()
  })

  it("opts in exactly the hostnames and networks of FETCH_ALLOW_HOSTS", () => {
    const policy = new AddressPolicy(allowHostsSchema.parse("127.0.0.1, Wiki.Internal, 10.1.0.0/16, [fd00::1], ::ffff:192.168.0.0/112"))
    expect(policy.addressRefusal("x.test", "127.0.0.1")).toBeUndefined()
    expect(policy.addressRefusal("x.test", "::ffff:127.0.0.1")).toBeUndefined()
    expect(policy.addressRefusal("x.test", "127.0.0.2")).toBeDefined()
    expect(policy.addressRefusal("x.test", "10.1.200.3")).toBeUndefined()
    expect(policy.addressRefusal("x.test", "10.2.0.1")).toBeDefined()
    expect(policy.addressRefusal("x.test", "fd00::1")).toBeUndefined()
    expect(policy.addressRefusal("x.test", "192.168.4.4")).toBeUndefined()
    expect(policy.addressRefusal("x.test", "192.169.0.1")).toBeUndefined() // public anyway
    expect(policy.addressRefusal("wiki.internal.", "10.9.9.9")).toBeUndefined()
    expect(policy.hostRefusal("localhost")).toBeDefined()
  })

  it("reports a bad FETCH_ALLOW_HOSTS or FETCH_MAX_BYTES as a configuration error", () => {
    const base = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "k" }
    expect(loadConfig(base).fetch).toEqual({ maxBytes: 5 * 1024 * 1024, allowHosts: { hosts: new Set(), cidrs: [] } })
    expect(loadConfig({ ...base, FETCH_MAX_BYTES: "4096" }).fetch.maxBytes).toBe(4096)
    for (const [variable, value] of [["FETCH_ALLOW_HOSTS", "good.example,not a host"], ["FETCH_ALLOW_HOSTS", "10.0.0.0/99"], ["FETCH_MAX_BYTES", "5MB"]] as const) {
      const error = (() => {
        try {
          loadConfig({ ...base, [variable]: value })
        } catch (caught) {
          return caught
        }
      })()
      expect(error, `${variable}=${value}`).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe(variable)
    }
  })
})

describe("fetch_url refuses non-public destinations", () => {
  let server: Server
  let port: number
  const hits: IncomingMessage[] = []
  const lookups: string[] = []
  /** Names the stub resolves; anything else does not exist. No lookup leaves the process. */
  const names: Record<string, string[]> = {
    "rebind.test": ["93.184.216.34", "127.0.0.1"],
    "internal.test": ["10.0.0.5"],
    "metadata.test": ["169.254.169.254"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "nat64.test": ["64:ff9b::c0a8:101"],
    "app.test": ["127.0.0.1"],
    "allowed.test": ["127.0.0.1"],
  }
  const resolve: Resolve = (hostname, _options, callback) => {
    lookups.push(hostname)
    const found = names[hostname.replace(/\.$/, "")]
    if (!found) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), [])
    callback(null, found.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 })))
  }
  const tool = (settings: Partial<FetchUrlSettings> = {}) => createFetchUrlTool({ maxBytes: 1024 * 1024, allowHosts: allowHostsSchema.parse(""), resolve, ...settings })

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req)
      const redirect = /^\/to\/(.+)$/.exec(req.url ?? "")
      if (redirect) return void res.writeHead(302, { location: decodeURIComponent(redirect[1]!) }).end()
      res.writeHead(200, { "content-type": "text/plain" }).end(`host=${req.headers.host}`)
    })
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
    port = (server.address() as AddressInfo).port
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  })

  it("refuses every spelling of a loopback or private address, without connecting", async () => {
    const fetchUrl = tool()
    const urls = [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://localhost.:${port}/`,
      `http://LocalHost:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://127.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://0x7f.0.0.1:${port}/`,
      `http://0177.0.0.1:${port}/`,
      `http://[::1]:${port}/`,
      `http://[::]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[::127.0.0.1]:${port}/`,
      `http://[64:ff9b::127.0.0.1]:${port}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.1/",
      "http://172.16.0.1/",
      "https://192.168.1.1/",
      "http://100.64.0.1/",
      "http://224.0.0.1/",
      "http://[fd00::1]/",
      "http://[fe80::1]/",
      "http://[ff02::1]/",
      "http://[64:ff9b::a00:1]/",
    ]
    for (const url of urls) await expect(run(fetchUrl, { url }), url).rejects.toThrow(/^refused: .*fetch_url may not reach/)
    expect(hits).toHaveLength(0)
    // Literal addresses and localhost are refused before any lookup.
    expect(lookups).toEqual([])
  })

  it("refuses a name if any address it resolves to is not public (checking every one)", async () => {
    const fetchUrl = tool()
    for (const host of ["rebind.test", "internal.test", "metadata.test", "mapped.test", "nat64.test", "app.test."]) {
      await expect(run(fetchUrl, { url: `http://${host}:${port}/` }), host).rejects.toThrow(/^refused: .*fetch_url may not reach/)
    }
    expect(hits).toHaveLength(0)
  })

  it("connects to the very address it checked: one lookup per connection, no second resolution", async () => {
    lookups.length = 0
    const fetchUrl = tool({ allowHosts: allowHostsSchema.parse("127.0.0.1") })
    const result = await run(fetchUrl, { url: `http://app.test:${port}/page` })
    expect(result).toMatchObject({ status: 200, text: `host=app.test:${port}` })
    expect(lookups).toEqual(["app.test"])
  })

  it("checks every redirect hop: an allowed host cannot redirect into loopback or the metadata service", async () => {
    const fetchUrl = tool({ allowHosts: allowHostsSchema.parse("allowed.test") })
    expect(await run(fetchUrl, { url: `http://allowed.test:${port}/page` })).toMatchObject({ status: 200 })
    hits.length = 0
    for (const target of [`http://127.0.0.1:${port}/secret`, `http://localhost:${port}/secret`, `http://[::ffff:7f00:1]:${port}/secret`, `http://2130706433:${port}/secret`, "http://169.254.169.254/latest/meta-data/", `http://internal.test:${port}/secret`]) {
      await expect(run(fetchUrl, { url: `http://allowed.test:${port}/to/${encodeURIComponent(target)}` }), target).rejects.toThrow(/^refused: /)
    }
    // Only the redirecting hops reached the server; no /secret.
    expect(hits.map((hit) => hit.url)).toEqual(expect.arrayContaining([expect.stringMatching(/^\/to\//)]))
    expect(hits.some((hit) => hit.url === "/secret")).toBe(false)
  })

  it("refuses a redirect out of http(s)", async () => {
    const fetchUrl = tool({ allowHosts: allowHostsSchema.parse("127.0.0.1") })
    await expect(run(fetchUrl, { url: `http://127.0.0.1:${port}/to/${encodeURIComponent("file:///etc/passwd")}` })).rejects.toThrow(ToolError)
  })
})

describe("fetch_url bounds what a page can cost", () => {
  let server: Server
  let base: string
  const NESTED = 2 * 1024 * 1024
  const nestedPage = (() => {
    const levels = Math.floor((NESTED - 64) / "<div>x </div>".length)
    return `<html><body>${"<div>x ".repeat(levels)}<p>the bottom</p>${"</div>".repeat(levels)}</body></html>`
  })()

  let gzipBomb: Buffer
  let deflateBomb: Buffer
  let brotliBomb: Buffer

  beforeAll(async () => {
    // 300 MB of text in a few hundred KB: what the body cap must count is the inflated bytes.
    gzipBomb = await deflatedZeros(300 * 1024 * 1024, { format: "gzip", fill: 0x61 })
    deflateBomb = await deflatedZeros(300 * 1024 * 1024, { format: "zlib", fill: 0x3c })
    brotliBomb = brotliCompressSync(Buffer.alloc(64 * 1024 * 1024, 0x62), { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } })
    server = createServer((req, res) => {
      switch (req.url) {
        case "/gzip-bomb":
          return void res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(gzipBomb)
        case "/deflate-bomb":
          return void res.writeHead(200, { "content-type": "text/html", "content-encoding": "deflate" }).end(deflateBomb)
        case "/br-bomb":
          return void res.writeHead(200, { "content-type": "text/plain", "content-encoding": "br" }).end(brotliBomb)
        case "/stacked-bomb":
          // Encodings stacked ("gzip, gzip"), in chunks without a length.
          res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip, gzip", "transfer-encoding": "chunked" })
          return void res.end(gzipSync(gzipBomb))
        case "/slow":
          return // never answers
        case "/trickle": {
          // Headers at once, then a byte now and then: only a whole-request timeout ends it.
          res.writeHead(200, { "content-type": "text/plain" })
          const timer = setInterval(() => res.write("."), 50)
          res.on("close", () => clearInterval(timer))
          return
        }
        case "/big":
          return void res.writeHead(200, { "content-type": "text/plain" }).end("b".repeat(10_000))
        case "/nested":
          return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(nestedPage)
        default:
          res.writeHead(404).end()
      }
    })
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((done) => server.close(done))
  })

  const local = (settings: Partial<FetchUrlSettings> = {}) => createFetchUrlTool({ maxBytes: 5 * 1024 * 1024, allowHosts: allowHostsSchema.parse("127.0.0.1"), ...settings })

  it("times out a server that never answers, and one that never finishes its body", async () => {
    const fetchUrl = local({ timeoutMs: 300 })
    for (const path of ["/slow", "/trickle"]) {
      const started = Date.now()
      await expect(run(fetchUrl, { url: `${base}${path}` }), path).rejects.toThrow(/did not answer completely within 0.3 s/)
      expect(Date.now() - started).toBeLessThan(5_000)
    }
  }, 20_000)

  it("reads at most FETCH_MAX_BYTES of a body", async () => {
    const result = await run(local({ maxBytes: 1024 }), { url: `${base}/big` })
    expect(result).toMatchObject({ truncated: true })
    expect(result.text).toBe("b".repeat(1024))
  })

  it("stops reading a compressed bomb at FETCH_MAX_BYTES of inflated text (gzip, deflate, br, stacked gzip chunked)", async () => {
    const before = process.memoryUsage.rss()
    for (const path of ["/gzip-bomb", "/deflate-bomb", "/br-bomb", "/stacked-bomb"]) {
      const result = await run(local({ maxBytes: 1024 * 1024 }), { url: `${base}${path}`, maxChars: 1000 })
      expect(result, path).toMatchObject({ status: 200, truncated: true })
      expect(result.text.length, path).toBeLessThanOrEqual(1000)
    }
    expect(process.memoryUsage.rss() - before).toBeLessThan(150 * 1024 * 1024)
  }, 60_000)

  it("converts a 2 MiB page of nested elements off the event loop", async () => {
    const fetchUrl = local()
    let longest = 0
    let last = performance.now()
    const ticker = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
    }, 5)
    try {
      const result = await run(fetchUrl, { url: `${base}/nested` })
      expect(result.text).toContain("x x x")
      expect(result.truncated).toBe(true)
    } finally {
      clearInterval(ticker)
    }
    // Converting on the main thread blocked it for 25 s and more; a worker leaves it free.
    expect(longest).toBeLessThan(1_000)
  }, 60_000)
})
