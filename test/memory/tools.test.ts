import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { z } from "zod"
import { Memory } from "../../src/memory/memory.ts"
import { getHistoryByTimeTool } from "../../src/tool/get-history-by-time.ts"
import { getRecentHistoryTool } from "../../src/tool/get-recent-history.ts"
import { parseIsoDate } from "../../src/tool/iso-date.ts"
import { rememberTool } from "../../src/tool/remember.ts"
import { searchMemoryTool } from "../../src/tool/search-memory.ts"
import type { HistoryMessage, HistoryReader } from "../../src/core/types.ts"
import type { Capabilities, MemorySearch, MemoryService } from "../../src/tool/capabilities.ts"
import { ToolError, type ToolContext, type ToolDefinition } from "../../src/tool/tool.ts"

const USER = "telegram:1001"
const CONVERSATION = "slack:T1:D1"

class FakeMemory implements MemoryService {
  remembered: Array<[string, string, boolean]> = []
  searches: Array<[string, MemorySearch]> = []
  async remember(user: string, content: string, longTerm: boolean) {
    this.remembered.push([user, content, longTerm])
    return { path: "memory/x.md" }
  }
  async search(user: string, search: MemorySearch) {
    this.searches.push([user, search])
    return [{ source: "memory/x.md", date: "2026-01-10", content: "x", score: 1 }]
  }
}

/** Follows the HistoryReader contract over a fixed list, and records what it was asked. */
class FakeHistory implements HistoryReader {
  calls: unknown[][] = []
  constructor(private readonly messages: Array<HistoryMessage & { id?: string }>) {}
  async recent(conversation: string, count: number, offset: number) {
    this.calls.push(["recent", conversation, count, offset])
    const end = Math.max(0, this.messages.length - offset)
    return this.messages.slice(Math.max(0, end - count), end)
  }
  async between(conversation: string, after: Date, before: Date) {
    this.calls.push(["between", conversation, after, before])
    return this.messages.filter((m) => new Date(m.createdAt) >= after && new Date(m.createdAt) <= before)
  }
}

function context(services: { memory?: MemoryService; history?: HistoryReader }): ToolContext {
  return {
    role: "planner",
    agent: "planner",
    conversation: CONVERSATION,
    user: USER,
    sessionId: "session",
    callId: "call",
    abort: new AbortController().signal,
    ...(services as Capabilities),
  }
}

/** Parses the arguments like the runtime does, so schema defaults and types apply. */
function run<P extends z.ZodType>(tool: ToolDefinition<P>, args: unknown, ctx: ToolContext): Promise<any> {
  return tool.execute!(tool.parameters.parse(args), ctx)
}

async function toolError(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ToolError)
  return (error as ToolError).message
}

describe("parseIsoDate", () => {
  it.each([
    ["2026-11-22T14:30:00Z", "2026-11-22T14:30:00.000Z"],
    ["2026-11-22T14:30Z", "2026-11-22T14:30:00.000Z"],
    ["2026-11-22T14:30:00.123456+02:00", "2026-11-22T12:30:00.123Z"],
    ["2026-11-22T14:30:00-0530", "2026-11-22T20:00:00.000Z"],
    ["2026-02-28T00:00:00z", "2026-02-28T00:00:00.000Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
  ])("reads %s", (value, iso) => {
    expect(parseIsoDate(value, "after").toISOString()).toBe(iso)
  })

  it("reads times without a zone, and bare dates, as local time", () => {
    expect(parseIsoDate("2026-11-22T14:30", "after").getTime()).toBe(new Date(2026, 10, 22, 14, 30).getTime())
    expect(parseIsoDate("2026-11-22", "after").getTime()).toBe(new Date(2026, 10, 22).getTime())
    expect(parseIsoDate("2026-11-22", "before", "end").getTime()).toBe(new Date(2026, 10, 22, 23, 59, 59, 999).getTime())
  })

  it.each(["yesterday", "", "2026-13-01", "2026-00-10", "2026-01-00", "2026-02-30", "2025-02-29", "2026-11-22T25:00", "2026-11-22T12:60", "2026-11-22T12:00+24:00", "22/11/2026", "2026-11-22T"])(
    "rejects %j with a clear message",
    (value) => {
      expect(() => parseIsoDate(value, "after")).toThrow(ToolError)
      expect(() => parseIsoDate(value, "after")).toThrow(/^after: ".*" is not an ISO 8601 date; use e\.g\. 2026-11-22/)
    },
  )
})

describe("remember tool", () => {
  it("saves for the calling user, short-term by default", async () => {
    const memory = new FakeMemory()
    expect(await run(rememberTool, { content: "Dentist Friday" }, context({ memory }))).toEqual({ path: "memory/x.md" })
    await run(rememberTool, { content: "Likes tea", longTerm: true }, context({ memory }))
    expect(memory.remembered).toEqual([
      [USER, "Dentist Friday", false],
      [USER, "Likes tea", true],
    ])
  })

  it("refuses empty and oversized content", async () => {
    const memory = new FakeMemory()
    expect(await toolError(run(rememberTool, { content: "  \n" }, context({ memory })))).toMatch(/empty/)
    expect(await toolError(run(rememberTool, { content: "x".repeat(20_001) }, context({ memory })))).toMatch(/at most 20000/)
    expect(memory.remembered).toEqual([])
  })
})

describe("search_memory tool", () => {
  it("searches the calling user's memory with a default limit of 5", async () => {
    const memory = new FakeMemory()
    expect(await run(searchMemoryTool, { query: "dentist" }, context({ memory }))).toEqual({ hits: [{ source: "memory/x.md", date: "2026-01-10", content: "x", score: 1 }] })
    expect(memory.searches).toEqual([[USER, { query: "dentist", after: undefined, before: undefined, limit: 5 }]])
  })

  it("passes inclusive bounds: a bare `before` date covers its whole day", async () => {
    const memory = new FakeMemory()
    await run(searchMemoryTool, { query: "x", after: "2026-01-10", before: "2026-01-11", limit: 50 }, context({ memory }))
    expect(memory.searches[0]![1]).toEqual({ query: "x", after: new Date(2026, 0, 10), before: new Date(2026, 0, 11, 23, 59, 59, 999), limit: 50 })
  })

  it.each([
    [{ query: "" }, /query is empty/],
    [{ query: "   " }, /query is empty/],
    [{ query: "the of and" }, /no searchable words/],
    [{ query: "x", limit: 0 }, /limit must be between 1 and 50, got 0/],
    [{ query: "x", limit: 51 }, /limit must be between 1 and 50, got 51/],
    [{ query: "x", after: "last week" }, /^after: "last week" is not an ISO 8601 date/],
    [{ query: "x", before: "2026-02-30" }, /^before: "2026-02-30" is not an ISO 8601 date/],
    [{ query: "x", after: "2026-01-12", before: "2026-01-11" }, /after \(2026-01-12\) is later than before \(2026-01-11\)/],
  ])("rejects %j", async (args, message) => {
    const memory = new FakeMemory()
    expect(await toolError(run(searchMemoryTool, args, context({ memory })))).toMatch(message)
    expect(memory.searches).toEqual([])
  })

  it("finds notes of a whole `before` day in a real memory folder", async () => {
    const dir = await mkdtemp(join(tmpdir(), "steward-memory-tool-"))
    const memory = new Memory({ dir, scope: "user" })
    try {
      await mkdir(join(memory.folder(USER), "memory"), { recursive: true })
      for (const day of ["09", "10", "11", "12"]) await writeFile(join(memory.folder(USER), "memory", `2026-01-${day}-canoe.md`), `Canoe day ${day}\n`)
      const { hits } = await run(searchMemoryTool, { query: "canoe", after: "2026-01-10T12:00", before: "2026-01-11" }, context({ memory }))
      expect(hits.map((hit: { source: string }) => hit.source).sort()).toEqual(["memory/2026-01-10-canoe.md", "memory/2026-01-11-canoe.md"])
    } finally {
      await memory.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

const at = (iso: string, text: string, role: "user" | "assistant" = "user") => ({ role, text, createdAt: iso, id: `id-${text}` })
const MESSAGES = [at("2026-01-10T09:59:59.999Z", "m1"), at("2026-01-10T10:00:00.000Z", "m2", "assistant"), at("2026-01-10T10:30:00.000Z", "m3"), at("2026-01-10T11:00:00.000Z", "m4", "assistant"), at("2026-01-10T11:00:00.001Z", "m5")]
const texts = (result: { messages: HistoryMessage[] }) => result.messages.map((m) => m.text)

describe("get_recent_history tool", () => {
  it("returns the newest `count` messages of this conversation, oldest first, with exactly role, text and createdAt", async () => {
    const history = new FakeHistory(MESSAGES)
    const result = await run(getRecentHistoryTool, { count: 2 }, context({ history }))
    expect(result).toEqual({ messages: [{ role: "assistant", text: "m4", createdAt: "2026-01-10T11:00:00.000Z" }, { role: "user", text: "m5", createdAt: "2026-01-10T11:00:00.001Z" }] })
    expect(history.calls).toEqual([["recent", CONVERSATION, 2, 0]])
  })

  it("counts back from the newest with offset", async () => {
    const history = new FakeHistory(MESSAGES)
    expect(texts(await run(getRecentHistoryTool, { count: 2, offset: 1 }, context({ history })))).toEqual(["m3", "m4"])
  })

  it.each([
    [0, 1],
    [-5, 1],
    [200, 200],
    [1000, 200],
  ])("clamps count %i to %i", async (count, clamped) => {
    const history = new FakeHistory(MESSAGES)
    await run(getRecentHistoryTool, { count }, context({ history }))
    expect(history.calls[0]![2]).toBe(clamped)
  })

  it("rejects a negative offset", async () => {
    expect(await toolError(run(getRecentHistoryTool, { count: 5, offset: -1 }, context({ history: new FakeHistory(MESSAGES) })))).toMatch(/offset must be 0 or more/)
  })
})

describe("get_history_by_time tool", () => {
  it("includes messages exactly at both bounds", async () => {
    const history = new FakeHistory(MESSAGES)
    const result = await run(getHistoryByTimeTool, { after: "2026-01-10T10:00:00Z", before: "2026-01-10T11:00:00Z" }, context({ history }))
    expect(texts(result)).toEqual(["m2", "m3", "m4"])
    expect(result.messages.every((m: object) => Object.keys(m).sort().join() === "createdAt,role,text")).toBe(true)
    expect(history.calls).toEqual([["between", CONVERSATION, new Date("2026-01-10T10:00:00Z"), new Date("2026-01-10T11:00:00Z")]])
  })

  it("reads up to now without before, and whole days for bare dates", async () => {
    const history = new FakeHistory(MESSAGES)
    const start = Date.now()
    await run(getHistoryByTimeTool, { after: "2026-01-10" }, context({ history }))
    const [, , after, before] = history.calls[0] as [string, string, Date, Date]
    expect(after).toEqual(new Date(2026, 0, 10))
    expect(before.getTime()).toBeGreaterThanOrEqual(start)
    expect(before.getTime()).toBeLessThanOrEqual(Date.now())
    await run(getHistoryByTimeTool, { after: "2026-01-10", before: "2026-01-10" }, context({ history }))
    expect(history.calls[1]![3]).toEqual(new Date(2026, 0, 10, 23, 59, 59, 999))
  })

  it.each([
    [{ after: "noon" }, /^after: "noon" is not an ISO 8601 date/],
    [{ after: "2026-01-10", before: "2026-01-10T25:00" }, /^before: "2026-01-10T25:00" is not an ISO 8601 date/],
    [{ after: "2026-01-11", before: "2026-01-10" }, /later than before/],
  ])("rejects %j", async (args, message) => {
    const history = new FakeHistory(MESSAGES)
    expect(await toolError(run(getHistoryByTimeTool, args, context({ history })))).toMatch(message)
    expect(history.calls).toEqual([])
  })
})
