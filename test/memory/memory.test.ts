import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { localDay } from "../../src/memory/dates.ts"
import { Memory, type MemoryOptions } from "../../src/memory/memory.ts"
import type { IndexInfo } from "../../src/memory/scope.ts"
import { MAX_SNIPPET } from "../../src/memory/snippet.ts"
import type { MemoryHit } from "../../src/tool/capabilities.ts"

const A = "telegram:1001"
const B = "telegram:1002"
const today = localDay(new Date())

let root: string
let memory: Memory
let errors: unknown[]

function open(options: Partial<MemoryOptions> = {}): Memory {
  memory = new Memory({ dir: root, scope: "user", onError: (error) => errors.push(error), ...options })
  return memory
}

const search = (user: string, query: string, more: { after?: Date; before?: Date; limit?: number } = {}) => memory.search(user, { query, limit: 5, ...more })
const sources = (hits: MemoryHit[]) => hits.map((hit) => hit.source)
const folderOf = (user: string) => memory.folder(user)

/** Resolves with the next index build of any folder. */
function nextIndexed(): { options: Partial<MemoryOptions>; next: () => Promise<IndexInfo> } {
  let waiting: ((info: IndexInfo) => void) | undefined
  return {
    options: { onIndexed: (info) => waiting?.(info) },
    next: () => new Promise((resolve) => (waiting = resolve)),
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "steward-memory-"))
  errors = []
})

afterEach(async () => {
  expect(errors).toEqual([])
  await memory?.close()
  await rm(root, { recursive: true, force: true })
})

describe("remember", () => {
  it("writes today's note under memory/ in the user's folder and returns its path", async () => {
    open()
    const { path } = await memory.remember(A, "Dentist on Friday at 3pm", false)
    expect(path).toBe(`memory/${today}-dentist-on-friday-at-3pm.md`)
    expect(folderOf(A)).toBe(join(root, "telegram-1001"))
    expect(await readFile(join(folderOf(A), path), "utf8")).toBe("Dentist on Friday at 3pm\n")
  })

  it("never overwrites a note of the same name: the next ones get -2, -3…", async () => {
    open()
    const contents = ["Buy milk!", "Buy milk?", "Buy milk.", "buy milk..."]
    const paths = (await Promise.all(contents.map((content) => memory.remember(A, content, false)))).map((r) => r.path)
    const base = `memory/${today}-buy-milk`
    expect(new Set(paths)).toEqual(new Set([`${base}.md`, `${base}-2.md`, `${base}-3.md`, `${base}-4.md`]))
    for (const [i, path] of paths.entries()) expect(await readFile(join(folderOf(A), path), "utf8")).toBe(`${contents[i]}\n`)
  })

  it("returns the existing note when the same content is remembered again the same day", async () => {
    open()
    const first = await memory.remember(A, "Parking spot is B12", false)
    expect(await memory.remember(A, "Parking spot is B12", false)).toEqual(first)
    expect(await filesUnder(folderOf(A))).toEqual([first.path])
  })

  it("keeps names safe whatever the content", async () => {
    open()
    expect((await memory.remember(A, "../../etc", false)).path).toBe(`memory/${today}-etc.md`)
    expect((await memory.remember(A, "🎉🎉", false)).path).toBe(`memory/${today}-note.md`)
    expect((await memory.remember(A, "/", false)).path).toBe(`memory/${today}-note-2.md`)
    const long = (await memory.remember(A, "very ".repeat(100), false)).path
    expect(long.length).toBeLessThanOrEqual(`memory/${today}-.md`.length + 48)
    expect(await readdir(root)).toEqual(["telegram-1001"])
    expect((await filesUnder(folderOf(A))).every((file) => file.startsWith("memory/"))).toBe(true)
  })

  it("appends dated long-term entries to memory.md, once each", async () => {
    open()
    expect(await memory.remember(A, "Likes green tea", true)).toEqual({ path: "memory.md" })
    await memory.remember(A, "Allergic to nuts\n", true)
    await memory.remember(A, "Allergic to nuts", true)
    expect(await readFile(join(folderOf(A), "memory.md"), "utf8")).toBe(`## ${today}\n\nLikes green tea\n\n## ${today}\n\nAllergic to nuts\n`)
  })

  it("keeps memory.md well-formed after a hand edit and under concurrent appends", async () => {
    open()
    await mkdir(folderOf(A), { recursive: true })
    await writeFile(join(folderOf(A), "memory.md"), "# Mine\nno final newline")
    await Promise.all(["one", "two", "three"].map((content) => memory.remember(A, content, true)))
    const text = await readFile(join(folderOf(A), "memory.md"), "utf8")
    expect(text.startsWith(`# Mine\nno final newline\n\n## ${today}\n\n`)).toBe(true)
    for (const word of ["one", "two", "three"]) expect(text).toContain(`## ${today}\n\n${word}\n`)
    expect(text.match(/^## /gm)).toHaveLength(3)
  })
})

describe("recordCompaction", () => {
  it("appends time-headed summaries to today's conversation summary, found by search", async () => {
    open()
    await memory.recordCompaction(A, "We planned the trip to Lisbon.")
    await memory.recordCompaction(A, "Booked the hotel near Alfama.")
    await memory.recordCompaction(A, "  ")
    const path = `memory/${today}-conversation-summary.md`
    const text = await readFile(join(folderOf(A), path), "utf8")
    expect(text).toMatch(/^## \d\d:\d\d\n\nWe planned the trip to Lisbon\.\n\n## \d\d:\d\d\n\nBooked the hotel near Alfama\.\n$/)
    expect(sources(await search(A, "Alfama hotel"))).toEqual([path])
  })
})

describe("recordCompaction, replayed", () => {
  afterEach(() => {
    vi.useRealTimers()
  })
  const at = (time: Date) => vi.setSystemTime(time)
  const summaryOf = (day: string) => readFile(join(folderOf(A), `memory/${day}-conversation-summary.md`), "utf8").catch(() => undefined)

  it("keeps one entry per summary: written again minutes later, after another one, or after midnight", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    open()
    const lisbon = "We chose Lisbon.\n\n## Open\n\nBook flights."
    at(new Date(2026, 2, 10, 23, 57))
    await memory.recordCompaction(A, lisbon)
    at(new Date(2026, 2, 10, 23, 58))
    await memory.recordCompaction(A, `${lisbon}\n`)
    await memory.recordCompaction(A, "Hotel near Alfama.")
    at(new Date(2026, 2, 10, 23, 59))
    await memory.recordCompaction(A, lisbon)
    // Text that only ends another entry is an entry of its own.
    await memory.recordCompaction(A, "Book flights.")
    at(new Date(2026, 2, 11, 0, 1))
    await memory.recordCompaction(A, "Hotel near Alfama.")
    await memory.recordCompaction(A, "Museum on Sunday.")
    at(new Date(2026, 2, 11, 0, 3))
    await memory.recordCompaction(A, "Museum on Sunday.")
    expect(await summaryOf("2026-03-10")).toBe(`## 23:57\n\n${lisbon}\n\n## 23:58\n\nHotel near Alfama.\n\n## 23:59\n\nBook flights.\n`)
    expect(await summaryOf("2026-03-11")).toBe("## 00:01\n\nMuseum on Sunday.\n")
  })

  it("writes nothing for an empty summary", async () => {
    open()
    await memory.recordCompaction(A, "  \n")
    expect(await readdir(root)).toEqual([])
  })
})

describe("scopes", () => {
  it("never shows one user's notes to another", async () => {
    open()
    await memory.remember(A, "Secret plan: surprise party for Sam", false)
    await memory.remember(A, "Sam likes chocolate cake", true)
    await memory.remember(B, "Grocery list: apples", false)
    expect((await search(A, "surprise party Sam")).length).toBe(2)
    expect(await search(B, "surprise party Sam")).toEqual([])
    expect(sources(await search(B, "apple"))).toEqual([`memory/${today}-grocery-list-apples.md`])
    expect(await search(A, "apple")).toEqual([])
    expect(new Set(await readdir(root))).toEqual(new Set(["telegram-1001", "telegram-1002"]))
  })

  it("shares one folder when the scope is shared", async () => {
    open({ scope: "shared" })
    await memory.remember(A, "Wifi password is on the fridge", false)
    expect(sources(await search(B, "wifi password"))).toEqual([`memory/${today}-wifi-password-is-on-the-fridge.md`])
    expect(await readdir(root)).toEqual(["shared"])
  })
})

describe.each([true, false])("search, fs.watch %s", (watch) => {
  it("works with 0, 1, 2 and 3 notes", async () => {
    open({ watch })
    expect(await search(A, "kayak")).toEqual([])
    const notes = ["Kayak trip on the lake", "Kayak paddles are in the garage", "Kayak club meets Tuesday"]
    for (const [i, note] of notes.entries()) {
      await memory.remember(A, note, false)
      expect(await search(A, "kayak"), "before a rebuild").toHaveLength(i + 1)
      expect((await memory.rebuild(A)).chunks).toBe(i + 1)
      expect(await search(A, "kayak"), "after a rebuild").toHaveLength(i + 1)
    }
  })

  it("finds notes edited, added and deleted by hand, at once and after a rebuild", async () => {
    open({ watch })
    const { path: edited } = await memory.remember(A, "Notes about gardening tomatoes", false)
    const { path: deleted } = await memory.remember(A, "Old note about the violin", false)
    await memory.remember(A, "Call the plumber", false)
    expect(sources(await search(A, "violin"))).toEqual([deleted])

    const folder = folderOf(A)
    await writeFile(join(folder, edited), "Now about sailing boats\n")
    await appendFile(join(folder, `memory/${today}-call-the-plumber.md`), "\nAlso the electrician.\n")
    await writeFile(join(folder, "memory", "recipes.md"), "# Recipes\n\nGrandma's apple pie\n")
    await writeFile(join(folder, "ideas.md"), "Build a treehouse\n")
    await unlink(join(folder, deleted))
    for (const phase of ["at once", "after a rebuild"]) {
      expect(sources(await search(A, "sailing boat")), phase).toEqual([edited])
      expect(await search(A, "gardening tomatoes"), phase).toEqual([])
      expect(sources(await search(A, "electrician")), phase).toEqual([`memory/${today}-call-the-plumber.md`])
      expect(sources(await search(A, "apple pie")), phase).toEqual(["memory/recipes.md"])
      expect(sources(await search(A, "treehouse")), phase).toEqual(["ideas.md"])
      expect(await search(A, "violin"), phase).toEqual([])
      await memory.rebuild(A)
    }
  })
})

describe("search", () => {
  it("finds Chinese, Japanese and mixed notes by queries in their language", async () => {
    open()
    await memory.remember(A, "明天下午三点和王经理开会讨论预算", false)
    await memory.remember(A, "来週の月曜日に歯医者の予約があります", false)
    await memory.remember(A, "用Python写一个备份脚本 for the NAS", false)
    await memory.remember(A, "The budget meeting moved to Monday", false)
    expect(sources(await search(A, "预算"))).toEqual([expect.stringContaining("明天下午三点")])
    expect(sources(await search(A, "王经理开会"))).toEqual([expect.stringContaining("明天下午三点")])
    expect(sources(await search(A, "歯医者の予約"))).toEqual([expect.stringContaining("来週の月曜日")])
    expect(sources(await search(A, "python 脚本"))).toEqual([expect.stringContaining("用python写")])
    expect(sources(await search(A, "NAS backup script"))).toEqual([expect.stringContaining("用python写")])
    expect(sources(await search(A, "budget"))).toEqual([expect.stringContaining("the-budget-meeting")])
  })

  it("filters by the note's date, both bounds inclusive", async () => {
    open()
    const folder = folderOf(A)
    await mkdir(join(folder, "memory"), { recursive: true })
    for (const day of ["09", "10", "11", "12"]) await writeFile(join(folder, "memory", `2026-01-${day}-kayak.md`), `Kayak log of January ${day}\n`)
    await writeFile(join(folder, "memory.md"), "## 2026-01-10\n\nKayak bought\n\n## 2026-01-13\n\nKayak sold\n")
    const within = await search(A, "kayak", { after: new Date(2026, 0, 10), before: new Date(2026, 0, 11, 23, 59), limit: 50 })
    expect(new Set(sources(within))).toEqual(new Set(["memory/2026-01-10-kayak.md", "memory/2026-01-11-kayak.md", "memory.md"]))
    expect(within.find((hit) => hit.source === "memory.md")!.content).toContain("Kayak bought")
    expect(sources(await search(A, "kayak", { after: new Date(2026, 0, 12, 18), limit: 50 })).sort()).toEqual(["memory.md", "memory/2026-01-12-kayak.md"])
    expect(sources(await search(A, "kayak", { before: new Date(2026, 0, 9), limit: 50 }))).toEqual(["memory/2026-01-09-kayak.md"])
  })

  it("dates a daily note by its name, never by a dated heading inside it; memory.md by its entries", async () => {
    open()
    const folder = folderOf(A)
    await mkdir(join(folder, "memory"), { recursive: true })
    await writeFile(join(folder, "memory", "2025-01-01-trip.md"), "# Trip\n\nKayak trip planning.\n\n## 2025-07-07\n\nKayak rental booked for the day.\n")
    await writeFile(join(folder, "memory.md"), "## 2025-07-07\n\nKayak paddles bought\n")
    const summer = await search(A, "kayak", { after: new Date(2025, 6, 1), limit: 50 })
    expect(sources(summer)).toEqual(["memory.md"])
    const newYear = await search(A, "kayak", { before: new Date(2025, 0, 1), limit: 50 })
    expect(sources(newYear)).toEqual(["memory/2025-01-01-trip.md", "memory/2025-01-01-trip.md"])
    expect(newYear.map((hit) => hit.content).join()).toContain("rental booked")
  })

  it("returns {source, date, content, score} best first, content cut around the match", async () => {
    open()
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i}`).join(" ")
    await memory.remember(A, `${filler(60)} The spare key is under the blue flowerpot. ${filler(60)}`, false)
    await memory.remember(A, "The key to the shed", false)
    await memory.remember(A, "A blue car", false)
    const hits = await search(A, "spare key blue flowerpot")
    expect(hits.map((hit) => Object.keys(hit).sort())).toEqual(hits.map(() => ["content", "date", "score", "source"]))
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a))
    expect(hits[0]!.content.length).toBeLessThanOrEqual(MAX_SNIPPET)
    expect(hits[0]!.content).toMatch(/^….*The spare key is under the blue flowerpot\..*…$/s)
    expect(await search(A, "key", { limit: 1 })).toHaveLength(1)
  })

  it("finds a note remembered while a rebuild is running, once the rebuild is done too", async () => {
    open()
    for (const note of ["Lamp needs a new bulb", "Oil change in March", "Library books due"]) await memory.remember(A, note, false)
    await search(A, "lamp")
    let rebuilt = false
    const rebuilding = memory.rebuild(A).then(() => (rebuilt = true))
    const { path } = await memory.remember(A, "Zeppelin museum opens Sunday", false)
    await writeFile(join(folderOf(A), `memory/${today}-oil-change-in-march.md`), "Oil change moved to April\n")
    expect(sources(await search(A, "zeppelin"))).toEqual([path])
    expect(sources(await search(A, "april"))).toEqual([`memory/${today}-oil-change-in-march.md`])
    expect(rebuilt).toBe(false)
    await rebuilding
    expect(sources(await search(A, "zeppelin museum"))).toEqual([path])
    expect(await search(A, "march")).toEqual([])
  })

  it("finds a note right after remember with 10,000 chunks indexed", async () => {
    open()
    const folder = join(folderOf(A), "memory")
    await mkdir(folder, { recursive: true })
    const words = Array.from({ length: 3000 }, (_, i) => `w${(i * 7919) % 3001}x`)
    const section = (n: number) => `## Part ${n}\n\n${Array.from({ length: 40 }, (_, i) => words[(n * 31 + i * 17) % words.length]).join(" ")}.\n`
    for (let file = 0; file < 2000; file += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(join(folder, `2025-06-01-bulk-${file + i}.md`), [0, 1, 2, 3, 4].map((s) => section((file + i) * 5 + s)).join("\n"))))
    }
    expect((await memory.rebuild(A)).chunks).toBe(10_000)
    const start = performance.now()
    const { path } = await memory.remember(A, "The gate code is 4711", false)
    const hits = await search(A, "gate code")
    expect(performance.now() - start).toBeLessThanOrEqual(100)
    expect(sources(hits)).toEqual([path])
  })

  it("answers a cold folder's first search before its index is built, ranked as the index ranks", async () => {
    const indexed = nextIndexed()
    open(indexed.options)
    const folder = join(folderOf(A), "memory")
    await mkdir(folder, { recursive: true })
    const words = ["kayak", "paddle", "river", "lake", "tent", "stove", "map", "boots", "rain", "jacket", "snack", "water"]
    await Promise.all(
      Array.from({ length: 200 }, (_, n) => {
        const text = Array.from({ length: 6 + (n % 9) }, (_, i) => words[(n * 7 + i * i * 3) % words.length]).join(" ")
        return writeFile(join(folder, `2025-05-${String((n % 28) + 1).padStart(2, "0")}-trip-${n}.md`), `## Trip ${n}\n\n${text}\n`)
      }),
    )
    let built = false
    const building = indexed.next().then((info) => {
      built = true
      return info
    })
    const query = { after: new Date(2025, 4, 3), before: new Date(2025, 4, 20), limit: 10 }
    const cold = await search(A, "kayak river jacket", query)
    expect(built, "answered without waiting for the build").toBe(false)
    expect(cold).toHaveLength(10)
    expect((await building).chunks).toBe(200)
    const warm = await search(A, "kayak river jacket", query)
    expect(cold.map((hit) => hit.score)).toEqual(warm.map((hit) => expect.closeTo(hit.score, 2)))
    expect(new Set(sources(cold))).toEqual(new Set(sources(warm)))
  })

  it("rebuilds in the background once enough notes changed", async () => {
    const indexed = nextIndexed()
    open({ rebuildThreshold: 2, ...indexed.options })
    let built = indexed.next()
    await search(A, "anything")
    expect((await built).files).toBe(0)
    for (const note of ["Red bicycle", "Red kite", "Red scarf"]) await memory.remember(A, note, false)
    built = indexed.next()
    expect(await search(A, "red")).toHaveLength(3)
    expect(await built).toMatchObject({ files: 3, chunks: 3 })
    expect(await search(A, "red")).toHaveLength(3)
  })

  it("stops an idle folder's index and builds it again when searched", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    try {
      const indexed = nextIndexed()
      open({ idleMs: 60_000, ...indexed.options })
      await memory.remember(A, "Umbrella in the car", false)
      let built = indexed.next()
      expect(await search(A, "umbrella")).toHaveLength(1)
      await built
      built = indexed.next()
      vi.advanceTimersByTime(60_001)
      let rebuilt = false
      void built.then(() => (rebuilt = true))
      expect(await search(A, "umbrella")).toHaveLength(1)
      expect(rebuilt, "answered without waiting for the build").toBe(false)
      expect((await built).files).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })
})
