import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Attachments } from "../../src/attachments/attachments.ts"
import { ConfigError, loadConfig } from "../../src/config/config.ts"
import { localDay } from "../../src/memory/dates.ts"
import { MessageRate } from "../../src/quota/message-rate.ts"
import { limitedMemory, notesOn } from "../../src/quota/note-quota.ts"
import { QuotaGuard } from "../../src/quota/quota-guard.ts"
import { shortestCronGap } from "../../src/quota/schedule-quota.ts"
import type { MemoryService } from "../../src/tool/capabilities.ts"
import { ToolError } from "../../src/tool/tool.ts"

const base = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "k" }
const OWNER = "telegram:1"
const USER = "telegram:2"

let dir: string
beforeEach(async () => void (dir = await mkdtemp(path.join(tmpdir(), "steward-quota-"))))
afterEach(() => rm(dir, { recursive: true, force: true }))

describe("quota settings", () => {
  it("have safe defaults", () => {
    expect(loadConfig(base).quotas).toEqual({ schedules: 10, minIntervalSeconds: 900, memoryNoteChars: 2000, memoryNotesPerDay: 50, uploadsPerDay: 50, tokensPerDay: 2_000_000, messagesPerMinute: 20 })
  })

  it.each([
    ["QUOTA_MESSAGES_PER_MINUTE", "0", 'QUOTA_MESSAGES_PER_MINUTE: expected a whole number from 1 to 10000, got "0"'],
    ["QUOTA_SCHEDULES", "ten", 'QUOTA_SCHEDULES: expected a whole number from 0 to 10000, got "ten"'],
    ["QUOTA_MIN_INTERVAL_SECONDS", "30", 'QUOTA_MIN_INTERVAL_SECONDS: expected a whole number from 60 to 31536000, got "30"'],
    ["QUOTA_TOKENS_PER_DAY", "1e6", 'QUOTA_TOKENS_PER_DAY: expected a whole number from 0 to 1000000000000, got "1e6"'],
    ["QUOTA_MEMORY_NOTE_CHARS", "-1", 'QUOTA_MEMORY_NOTE_CHARS: expected a whole number from 1 to 20000, got "-1"'],
    ["QUOTA_MEMORY_NOTES_PER_DAY", "2.5", 'QUOTA_MEMORY_NOTES_PER_DAY: expected a whole number from 0 to 1000000, got "2.5"'],
    ["QUOTA_UPLOADS_PER_DAY", "lots", 'QUOTA_UPLOADS_PER_DAY: expected a whole number from 0 to 1000000, got "lots"'],
  ])("refuse a bad %s in one line naming it", (variable, value, message) => {
    let error: unknown
    try {
      loadConfig({ ...base, [variable]: value })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect(error).toMatchObject({ variable, message })
  })
})

describe("messages per minute", () => {
  it("take the first N of a burst, tell the sender once, and take (and tell) again after a quiet minute", () => {
    let now = 0
    const rate = new MessageRate(20, () => now)
    const burst = Array.from({ length: 300 }, () => rate.admit(USER))
    expect(burst.filter((admission) => admission === "take")).toHaveLength(20)
    expect(burst.filter((admission) => admission === "slow down")).toHaveLength(1)
    expect(burst[20]).toBe("slow down")
    now += 30_000
    expect(rate.admit(USER)).toBe("refuse") // the window still holds 20
    now += 31_000
    expect(rate.admit(USER)).toBe("take")
    expect(Array.from({ length: 19 }, () => rate.admit(USER)).every((admission) => admission === "take")).toBe(true)
    expect(rate.admit(USER)).toBe("slow down") // a new burst is told again
  })

  it("never limit an owner", () => {
    const guard = new QuotaGuard({ quotas: loadConfig(base).quotas, isOwner: (user) => user === OWNER, usageSince: async () => [] })
    expect(Array.from({ length: 100 }, () => guard.rateRefusal(OWNER)).every((refusal) => refusal === undefined)).toBe(true)
  })
})

describe("a cron expression's pace", () => {
  it.each([
    ["* * * * *", 60],
    ["*/15 * * * *", 900],
    ["0,1 9 * * *", 60],
    ["0 9 * * 1-5", 86_400],
    ["0 */6 * * *", 21_600],
  ])("%s runs at most every %i s", (expression, seconds) => {
    expect(shortestCronGap(expression, "UTC")).toBe(seconds)
  })
})

describe("memory notes", () => {
  const folder = () => path.join(dir, "memory", "user")
  const remembered: string[] = []
  const memory: MemoryService = {
    search: async () => [],
    async remember(_user, content) {
      remembered.push(content)
      await mkdir(path.join(folder(), "memory"), { recursive: true })
      await writeFile(path.join(folder(), "memory", `${localDay(new Date())}-note-${remembered.length}.md`), content)
      return { path: `memory/${remembered.length}.md` }
    },
  }
  const guard = new QuotaGuard({ quotas: { ...loadConfig(base).quotas, memoryNoteChars: 100, memoryNotesPerDay: 3 }, isOwner: (user) => user === OWNER, usageSince: async () => [] })

  it("refuse a note over QUOTA_MEMORY_NOTE_CHARS and more than QUOTA_MEMORY_NOTES_PER_DAY, as tool errors; an owner's are not limited", async () => {
    const limited = limitedMemory(memory, guard, folder)
    await expect(limited.remember(USER, "x".repeat(101), false)).rejects.toThrow(new ToolError("the note is 101 characters; yours may hold at most 100 (QUOTA_MEMORY_NOTE_CHARS): keep the essentials"))
    // Entries of today in memory.md count too; a conversation summary is not a remembered note.
    await mkdir(path.join(folder(), "memory"), { recursive: true })
    await writeFile(path.join(folder(), "memory.md"), `## 2001-01-01\n\nold\n\n## ${localDay(new Date())}\n\nlikes tea\n`)
    await writeFile(path.join(folder(), "memory", `${localDay(new Date())}-conversation-summary.md`), "summary")
    expect(await notesOn(folder(), new Date())).toBe(1)
    await limited.remember(USER, "one", false)
    await limited.remember(USER, "two", false)
    await expect(limited.remember(USER, "three", false)).rejects.toThrow(/^3 notes were remembered for you today, the most allowed \(QUOTA_MEMORY_NOTES_PER_DAY=3\); try again tomorrow$/)
    await limited.remember(OWNER, "y".repeat(500), false)
    expect(remembered).toEqual(["one", "two", "y".repeat(500)])
  })
})

describe("uploads per day", () => {
  it("save at most QUOTA_UPLOADS_PER_DAY files a day and tell the sender about the rest", async () => {
    const attachments = new Attachments({ workspaceDir: dir, maxBytes: 100, quotaBytes: 1000, vision: false, uploadsPerDay: (user) => (user === OWNER ? undefined : 2), log: pino({ level: "silent" }) })
    const file = (name: string) => ({ kind: "document" as const, name, mimeType: "text/plain", download: async () => new TextEncoder().encode("hi") })
    const first = await attachments.take(USER, "", [file("a.txt")])
    const second = await attachments.take(USER, "", [file("b.txt"), file("c.txt")])
    expect(first.notices).toEqual([])
    expect(second.text).toMatch(/Saved file: inbox\/[\d-]+\/b\.txt[\s\S]*Not saved \(over the daily upload limit\): c\.txt/)
    expect(second.notices).toEqual(["I did not save c.txt: you may send 2 files a day (QUOTA_UPLOADS_PER_DAY); send it again tomorrow."])
    const owner = await attachments.take(OWNER, "", [file("a.txt"), file("b.txt"), file("c.txt")])
    expect(owner.notices).toEqual([])
  })
})
