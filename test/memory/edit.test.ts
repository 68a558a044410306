import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { forgetNotes, memoryOverview, memorySnapshot, SNAPSHOT_BYTES } from "../../src/memory/edit.ts"

let folder: string
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "steward-memory-edit-"))
  mkdirSync(join(folder, "memory"))
})
afterEach(() => rmSync(folder, { recursive: true, force: true }))

const write = (source: string, text: string) => writeFileSync(join(folder, source), text)
const read = (source: string) => readFileSync(join(folder, source), "utf8")

describe("memorySnapshot", () => {
  it("is empty without memory.md, and the whole note inside <memory> when it is small", async () => {
    expect(await memorySnapshot(folder)).toBe("")
    write("memory.md", "## 2026-03-01\n\nThe user lives in Berlin.\n")
    const snapshot = await memorySnapshot(folder)
    expect(snapshot.split("\n")[0]).toBe("<memory>")
    // The notes are a model's words, in an envelope whose boundary is the same at every call (the prompt cache).
    expect(snapshot).toMatch(/<untrusted-content source="memory.md" boundary="([0-9a-f]{16})">\n## 2026-03-01\n\nThe user lives in Berlin.\n<\/untrusted-content boundary="\1">\n<\/memory>$/)
    expect(await memorySnapshot(folder)).toBe(snapshot)
    expect(snapshot).not.toContain("older entries left out")
  })

  it("keeps the newest 8 KB, from a whole line, and says older entries were left out", async () => {
    const entries = Array.from({ length: 400 }, (_, i) => `## 2026-01-01\n\nFact number ${i} — ü.`)
    write("memory.md", entries.join("\n\n"))
    const snapshot = await memorySnapshot(folder)
    const body = snapshot.split("\n").slice(4, -2).join("\n")
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(SNAPSHOT_BYTES)
    expect(snapshot).toContain("(older entries left out)")
    expect(snapshot).toContain("Fact number 399 — ü.")
    expect(snapshot).not.toContain("Fact number 0 —")
    // Starts at a line: no half line, no broken character.
    expect(body).not.toContain("\uFFFD")
    expect(entries.join("\n\n")).toContain(body.split("\n")[0]!)
  })
})

describe("forgetNotes", () => {
  it("removes the matching lines of every note, the section left empty and a daily note left empty", async () => {
    write("memory.md", "## 2026-03-01\n\nThe user lives in Berlin.\n\n## 2026-03-02\n\nThe user likes tea.\n")
    write("memory/2026-03-01-home.md", "Moved to Berlin in May.\n")
    const result = await forgetNotes(folder, { query: "berlin" })
    expect(result).toEqual({
      changes: [
        { path: "memory.md", removed: ["The user lives in Berlin."], added: undefined },
        { path: "memory/2026-03-01-home.md", removed: ["Moved to Berlin in May."], deleted: true },
      ],
    })
    expect(read("memory.md")).toBe("## 2026-03-02\n\nThe user likes tea.\n")
    expect(existsSync(join(folder, "memory/2026-03-01-home.md"))).toBe(false)
    // Again: nothing left to change.
    expect(await forgetNotes(folder, { query: "berlin" })).toEqual({ changes: [] })
  })

  it("rewrites a matching line with the replacement, once per note", async () => {
    write("memory.md", "## 2026-03-01\n\nThe user lives in Berlin.\nBerlin flat has a cat.\n")
    const result = await forgetNotes(folder, { query: "Berlin", replacement: "The user lives in Munich." })
    expect(result).toEqual({ changes: [{ path: "memory.md", removed: ["The user lives in Berlin.", "Berlin flat has a cat."], added: "The user lives in Munich." }] })
    expect(read("memory.md")).toBe("## 2026-03-01\n\nThe user lives in Munich.\n")
  })

  it("removes or rewrites a whole note by path, and refuses paths outside the notes and bad requests", async () => {
    write("memory/2026-03-01-cat.md", "The cat is Miso.\n")
    write("memory/2026-03-02-dog.md", "The dog is Rex.\n")
    expect(await forgetNotes(folder, { path: "memory/2026-03-01-cat.md", replacement: "The cat is Mochi." })).toEqual({ changes: [{ path: "memory/2026-03-01-cat.md", removed: ["The cat is Miso."], added: "The cat is Mochi." }] })
    expect(read("memory/2026-03-01-cat.md")).toBe("The cat is Mochi.\n")
    expect(await forgetNotes(folder, { path: "memory/2026-03-02-dog.md" })).toMatchObject({ changes: [{ deleted: true }] })
    expect(await forgetNotes(folder, { path: "../../etc/passwd" })).toHaveProperty("error")
    expect(await forgetNotes(folder, { query: "a" })).toHaveProperty("error")
    expect(await forgetNotes(folder, {})).toHaveProperty("error")
    expect(await forgetNotes(folder, { query: "cat", path: "memory.md" })).toHaveProperty("error")
  })
})

describe("memoryOverview", () => {
  it("shows memory.md and the newest daily notes, bounded to one message", async () => {
    expect(await memoryOverview(folder)).toBe("I have no notes about you yet.")
    write("memory.md", `## 2026-03-01\n\nThe user lives in Berlin.\n${"filler line\n".repeat(1000)}The newest fact.\n`)
    for (let day = 1; day <= 7; day++) write(`memory/2026-03-0${day}-note.md`, `Note of day ${day}\n`)
    const overview = await memoryOverview(folder)
    expect(overview.length).toBeLessThanOrEqual(3500)
    expect(overview).toContain("The newest fact.")
    expect(overview).toContain("• memory/2026-03-07-note.md: Note of day 7")
    expect(overview).toContain("• memory/2026-03-03-note.md: Note of day 3")
    expect(overview).not.toContain("Note of day 2")
  })
})

describe("facts that changed, in /memory and forget", () => {
  const old = "memory/2024-03-02-address.md"
  const current = "memory/2025-09-20-moved.md"
  beforeEach(() => {
    write(old, "Our home address is Lindenstraße 14, Berlin.\n")
    write(current, "We moved! Now at Hafenweg 3, Hamburg.\n")
    write("memory.md", "## 2024-01-15\n\nMy mobile number is 0151 2345 6789.\n\n## 2025-07-01\n\nSwitched carriers, my new number is 0160 9876 5432.\n")
  })

  it("/memory shows each chain, oldest first, and says the last is current", async () => {
    const overview = await memoryOverview(folder)
    expect(overview).toContain(`• address: ${old} (2024-03-02) → ${current} (2025-09-20), the last is current`)
    expect(overview).toContain("• mobile: memory.md (2024-01-15) → memory.md (2025-07-01), the last is current")
    expect(overview).toContain("*Facts that changed* (older notes stay as history)")
  })

  it("forget says which chain a removed note was in", async () => {
    const result = await forgetNotes(folder, { path: current })
    expect(result).toEqual({ changes: [expect.objectContaining({ path: current, deleted: true, chain: [{ path: old, date: "2024-03-02" }, { path: current, date: "2025-09-20" }] })] })
    // The old note is no longer replaced by anything.
    expect(await memoryOverview(folder)).not.toContain("• address:")
    const untouched = await forgetNotes(folder, { query: "Berlin" })
    expect(untouched).toEqual({ changes: [expect.not.objectContaining({ chain: expect.anything() })] })
  })
})
