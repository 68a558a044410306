import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest"
import type { ChatRequest, Script } from "../fakes/model-server.ts"
import { startSearchApi, type FakeSearchApi } from "../fakes/search-api.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { calling, chain } from "../support/e2e.ts"
import { afterTool } from "../support/scripts.ts"
import { waitFor } from "../support/wait-for.ts"
import { mcpConfigFile, stdioServer } from "../mcp/support.ts"
import { unwrapped } from "../../src/trust/envelope.ts"

// Workers reach out: MCP tools and web search, through the real Supervisor, agent loop, AI SDK
// and MCP client, against a scripted model, a fake stdio MCP server and a fake SearXNG.

let harness: Harness | undefined
let search: FakeSearchApi
beforeAll(async () => void (search = await startSearchApi()))
afterAll(() => search.close())
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

function permissionsFile(rules: object): string {
  const path = join(harness?.dataDir ?? mcpConfigFile({}).replace(/mcp\.json$/, ""), "permissions.json")
  writeFileSync(path, JSON.stringify(rules))
  return path
}

const mcpEnv = (extra: Record<string, string> = {}) => ({ MCP_CONFIG: mcpConfigFile({ fake: stdioServer() }), ...extra })

describe("MCP tools for Workers", () => {
  it("calls an MCP tool and puts its result in the answer", async () => {
    const seen: ChatRequest[] = []
    harness = await startHarness(chain(calling("fake_echo", { text: "hello from MCP" }, seen)), mcpEnv())
    await harness.channel.say("echo something")
    const [answer] = await harness.channel.waitForSent(1)
    expect(answer!.text).toBe('Result: fake_echo said {"text":"echo: hello from MCP"}')
    expect(seen[0]!.toolNames).toEqual(expect.arrayContaining(["fetch_url", "fake_echo", "fake_add", "fake_clock_now"]))
    expect(harness.app.mcp?.status()[0]).toMatchObject({ name: "fake", state: "running" })
  })

  it("is not offered to the Teller or the Planner", async () => {
    const planner: ChatRequest[] = []
    harness = await startHarness(chain(calling("fake_echo", { text: "x" }), (req) => (planner.push(req), afterTool(req) ? { text: "ok" } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] })), mcpEnv())
    await harness.channel.say("go")
    await harness.channel.waitForSent(1)
    expect(planner[0]!.toolNames.some((name) => name.startsWith("fake_"))).toBe(false)
    const teller = harness.server.requests.find((r) => r.role === "teller")!
    expect(teller.body.tools?.some((t) => t.function.name.startsWith("fake_"))).toBe(false)
  })

  it("is hidden by a deny rule that names it with a wildcard", async () => {
    const seen: ChatRequest[] = []
    harness = await startHarness(chain(calling("fake_echo", { text: "x" }, seen)), mcpEnv())
    const rules = permissionsFile({ worker: [{ permission: "fake_ec*", pattern: "*", action: "deny" }] })
    await harness.restart({ graceful: true, env: mcpEnv({ PERMISSIONS_FILE: rules }) })
    await harness.channel.say("echo")
    const [answer] = await harness.channel.waitForSent(1)
    expect(seen[0]!.toolNames).not.toContain("fake_echo")
    expect(seen[0]!.toolNames).toContain("fake_add")
    expect(answer!.text).toMatch(/fake_echo said .*unavailable tool/)
  })

  it("refuses a call a deny rule matches by its arguments", async () => {
    harness = await startHarness(chain(calling("fake_echo", { text: "secret stuff" })), mcpEnv())
    const rules = permissionsFile({ worker: [{ permission: "fake_*", pattern: "*secret*", action: "deny" }] })
    await harness.restart({ graceful: true, env: mcpEnv({ PERMISSIONS_FILE: rules }) })
    await harness.channel.say("echo")
    const [answer] = await harness.channel.waitForSent(1)
    expect(answer!.text).toBe('Result: fake_echo said Permission denied: fake_echo may not be used on "{"text":"secret stuff"}".')
  })

  it.each([
    ["Allow", 'fake_echo said {"text":"echo: needs approval"}'],
    ["Deny", "fake_echo said Permission denied by the user"],
  ])("asks the user first when a rule says ask; %s", async (button, expected) => {
    harness = await startHarness(chain(calling("fake_echo", { text: "needs approval" })), mcpEnv())
    const rules = permissionsFile({ worker: [{ permission: "fake_*", pattern: "*", action: "ask" }] })
    await harness.restart({ graceful: true, env: mcpEnv({ PERMISSIONS_FILE: rules }) })
    await harness.channel.say("echo")
    const [question] = await harness.channel.waitForSent(1)
    expect(question!.text).toContain('fake_echo on “{"text":"needs approval"}”')
    expect(question!.buttons?.map((b) => b.label)).toEqual(["Allow", "Deny"])
    await harness.channel.press(button)
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text.startsWith("Result:")), "the answer")
    expect(harness.channel.sent.find((m) => m.text.startsWith("Result:"))!.text).toContain(expected)
  })

  it("times out a call that hangs, and the Worker reads why", async () => {
    harness = await startHarness(chain(calling("fake_hang", {})), mcpEnv({ MCP_TOOL_TIMEOUT: "1" }))
    await harness.channel.say("hang")
    const [answer] = await harness.channel.waitForSent(1)
    expect(answer!.text).toBe("Result: fake_hang said fake_hang did not answer within 1 s (MCP_TOOL_TIMEOUT); the call was cancelled")
  })

  it("restarts a server that crashed, and its tools come back for the next task", async () => {
    const worker: Script = (req) => {
      const result = req.lastToolResults[0]
      if (result) return { text: `${result.toolName}: ${unwrapped(result.content)}` }
      return { toolCalls: [req.lastUserText.includes("crash") ? { name: "fake_crash", args: {} } : { name: "fake_echo", args: { text: "alive" } }] }
    }
    // The crash's report is an MCP server's answer, so the next task starts tainted: the owner
    // lets the Worker use this server's tools after outside content without asking.
    const rules = permissionsFile({ worker: [{ permission: "tainted:fake_*", pattern: "*", action: "allow" }] })
    harness = await startHarness(chain(worker), mcpEnv({ PERMISSIONS_FILE: rules }))
    await harness.channel.say("crash it")
    const [crashed] = await harness.channel.waitForSent(1)
    // The model is told when to try again, never the server's error or stderr (it would relay them).
    expect(crashed!.text).toMatch(/^Result: fake_crash: fake_crash: the connection was lost during the call; MCP server "fake" stopped and is restarting \(the owner's log says why\); try again in about \d+ s/)
    expect(crashed!.text).not.toContain("crashing on purpose")
    await waitFor(() => harness!.app.mcp?.status()[0]?.state === "running" && harness!.app.mcp.status()[0]!.failures === 1, 15_000)
    await harness.channel.say("echo again")
    const answers = await harness.channel.waitForSent(2)
    expect(answers[1]!.text).toBe('Result: fake_echo: {"text":"echo: alive"}')
  })
})

describe("web_search", () => {
  it("gives a Worker search results that reach the answer", async () => {
    harness = await startHarness(chain(calling("web_search", { query: "steward mcp", limit: 1 })), { SEARCH_PROVIDER: "searxng", SEARXNG_URL: search.url })
    await harness.channel.say("search")
    const [answer] = await harness.channel.waitForSent(1)
    expect(answer!.text).toBe('Result: web_search said [{"title":"steward mcp result 1","url":"https://example.com/steward%20mcp/1","snippet":"About steward mcp & more, part 1."}]')
  })

  it("is offered to the Planner too, and to nobody when no provider is set", async () => {
    const planner: ChatRequest[] = []
    const planning: Script = (req) => (planner.push(req), afterTool(req) ? { text: "ok" } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] })
    harness = await startHarness(chain(calling("web_search", { query: "x" }), planning), { SEARCH_PROVIDER: "searxng", SEARXNG_URL: search.url })
    await harness.channel.say("go")
    await harness.channel.waitForSent(1)
    expect(planner[0]!.toolNames).toContain("web_search")
    await harness.restart({ graceful: true, env: { SEARCH_PROVIDER: "" } })
    await harness.channel.say("again")
    await harness.channel.waitForSent(1)
    expect(planner.at(-1)!.toolNames).not.toContain("web_search")
  })

  it("hands the model a rate limit as a tool error it can read", async () => {
    search.failWith({ status: 429, headers: { "retry-after": "10" } })
    try {
      harness = await startHarness(chain(calling("web_search", { query: "x" })), { SEARCH_PROVIDER: "searxng", SEARXNG_URL: search.url })
      await harness.channel.say("search")
      const [answer] = await harness.channel.waitForSent(1)
      expect(answer!.text).toBe("Result: web_search said searxng search is rate limited (HTTP 429); try again in 10 s or do without searching")
    } finally {
      search.failWith(undefined)
    }
  })
})
