import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { localDay } from "../../src/memory/dates.ts"
import { Memory } from "../../src/memory/memory.ts"
import { startEmbeddingsServer, type EmbeddingsServer } from "../fakes/embeddings-server.ts"
import { hybridMemory } from "../support/retrieval/hybrid.ts"
import { eventually } from "../support/wait-for.ts"

const A = "telegram:1001"
const B = "telegram:1002"

let root: string
let server: EmbeddingsServer
let memory: Memory
let warnings: string[]

async function note(user: string, name: string, text: string): Promise<void> {
  const folder = join(memory.folder(user), "memory")
  await mkdir(folder, { recursive: true })
  await writeFile(join(folder, name), `${text}\n`)
}

function open(options: { model?: string; queryTimeoutMs?: number } = {}): Memory {
  memory = hybridMemory(server, { dir: root, onWarning: (message) => warnings.push(message), ...options })
  return memory
}

const sources = (hits: Array<{ source: string }>) => hits.map((hit) => hit.source)
const search = (query: string, more: { after?: Date; before?: Date; user?: string } = {}) => memory.search(more.user ?? A, { query, limit: 5, ...more })

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "steward-hybrid-"))
  server = await startEmbeddingsServer()
  warnings = []
})

afterEach(async () => {
  await memory?.close()
  await server.close()
  await rm(root, { recursive: true, force: true })
})

async function someNotes(): Promise<void> {
  await note(A, "2025-10-12-dentist.md", "New dentist in Hamburg is Dr. Lena Hoffmann at Elbdental.")
  await note(A, "2025-01-02-bread.md", "Bought bread and milk at the market.")
  await note(A, "2025-01-03-walk.md", "Walk in the park with Anna on Sunday.")
}

describe("hybrid search", () => {
  it("finds a note by meaning that shares no word with the query", async () => {
    open()
    await someNotes()
    expect(await search("tooth doctor")).toEqual([])
    await memory.reindex()
    expect(sources(await search("tooth doctor"))[0]).toBe("memory/2025-10-12-dentist.md")
    expect(warnings).toEqual([])
  })

  it("embeds only new or changed chunks: after a write, and not again after a restart", async () => {
    open()
    await someNotes()
    await memory.reindex()
    expect(server.embedded).toBe(3)
    await memory.remember(A, "The babysitter Jonas is free on weekday evenings", false)
    await eventually(() => server.embedded === 4, "the new note embedded")
    await search("who minds the kids at night")
    expect(server.requests.at(-1)!.input).toEqual(["who minds the kids at night"])
    await memory.close()
    const before = server.requests.length
    open()
    await memory.embedAll()
    await eventually(async () => sources(await search("who minds the children at night")).includes(`memory/${localDay(new Date())}-the-babysitter-jonas-is-free-on-weekday-evenings.md`), "the stored vectors used")
    // Only the queries were embedded: the notes' vectors came from the file.
    expect(server.requests.slice(before).every((request) => request.input.length === 1)).toBe(true)
  })

  it("re-embeds everything in the background when the model changes, and keeps the model's name with the vectors", async () => {
    open()
    await someNotes()
    await memory.reindex()
    await memory.close()
    open({ model: "fake-embed-v2" })
    await memory.embedAll()
    await eventually(() => server.requests.filter((r) => r.model === "fake-embed-v2" && r.input.length === 3).length === 1, "a re-embedding with the new model")
    await eventually(async () => (await readFile(join(memory.folder(A), ".vectors.bin"), "utf8")).includes('"model":"openai-compatible:fake-embed-v2"'), "the vectors saved with the new model")
  })

  it("answers from lexical search, with a warning, when the provider fails", async () => {
    open()
    await someNotes()
    await memory.reindex()
    server.mode = "fail"
    expect(sources(await search("dentist"))).toEqual(["memory/2025-10-12-dentist.md"])
    expect(warnings).toEqual([expect.stringMatching(/^memory: embedding the query failed .*; lexical results only$/)])
  })

  it("answers from lexical search, with a warning, when the provider is too slow", async () => {
    open({ queryTimeoutMs: 200 })
    await someNotes()
    await memory.reindex()
    server.mode = "hang"
    const start = performance.now()
    expect(sources(await search("dentist"))).toEqual(["memory/2025-10-12-dentist.md"])
    expect(performance.now() - start).toBeLessThan(5_000)
    expect(warnings).toEqual([expect.stringMatching(/embedding the query failed \(no answer within 200 ms|aborted/)])
  })

  it("stops a background embedding that hangs when closed", async () => {
    open()
    await someNotes()
    server.mode = "hang"
    await memory.embedAll()
    await eventually(() => server.hanging > 0, "the embedding request sent")
    const start = performance.now()
    await memory.close()
    expect(performance.now() - start).toBeLessThan(2_000)
    expect(warnings).toEqual([])
  })

  it("keeps vector hits to the user's own notes and to the date window", async () => {
    open()
    await someNotes()
    await note(A, "2023-11-20-old-dentist.md", "Dentist: Dr. Weber, Schillerstraße 8, Berlin.")
    await note(B, "2025-10-02-b-dentist.md", "My dentist is Dr. Krause, tooth cleaning twice a year.")
    await memory.reindex()
    const mine = await search("tooth doctor")
    expect(sources(mine)).not.toContain("memory/2025-10-02-b-dentist.md")
    expect(mine.every((hit) => !hit.content.includes("Krause"))).toBe(true)
    expect(sources(await search("tooth doctor", { before: new Date(2024, 0, 1) }))).toEqual(["memory/2023-11-20-old-dentist.md"])
    expect(sources(await search("tooth doctor", { user: B }))).toEqual(["memory/2025-10-02-b-dentist.md"])
  })

  it("never returns a vector hit of a note changed since it was embedded", async () => {
    open()
    await someNotes()
    await memory.reindex()
    await note(A, "2025-10-12-dentist.md", "Cancelled: no appointment needed after all.")
    const hits = await search("tooth doctor")
    expect(hits.some((hit) => hit.content.includes("Hoffmann"))).toBe(false)
  })

  it("changes nothing without an embedding model: no vectors file, no requests", async () => {
    memory = new Memory({ dir: root, scope: "user" })
    await someNotes()
    await memory.remember(A, "Dentist bill paid", false)
    await memory.embedAll()
    expect(sources(await search("tooth doctor"))).toEqual([])
    expect(await readdir(memory.folder(A))).toEqual(["memory"])
    expect(server.requests).toEqual([])
    await expect(memory.reindex()).rejects.toThrow(/no embedding model/)
  })
})
