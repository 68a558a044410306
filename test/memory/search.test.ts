import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Memory } from "../../src/memory/memory.ts"

const A = "telegram:1001"
let root: string
let memory: Memory

async function note(name: string, text: string): Promise<void> {
  const folder = join(memory.folder(A), "memory")
  await mkdir(folder, { recursive: true })
  await writeFile(join(folder, name), `${text}\n`)
}

const sources = (hits: Array<{ source: string }>) => hits.map((hit) => hit.source)

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "steward-search-"))
  memory = new Memory({ dir: root, scope: "user" })
})

afterEach(async () => {
  await memory.close()
  await rm(root, { recursive: true, force: true })
})

describe("search", () => {
  it("ranks the newest note about a changed fact first, and dates every hit", async () => {
    await note("2024-03-02-address.md", "Our home address is Lindenstraße 14, Berlin.")
    await note("2024-08-19-address-again.md", "Reminder for forms: home address Lindenstraße 14, Berlin.")
    await note("2025-09-20-moved.md", "We moved! New home address: Hafenweg 3, Hamburg.")
    const hits = await memory.search(A, { query: "what is our home address", limit: 5 })
    expect(hits[0]).toMatchObject({ source: "memory/2025-09-20-moved.md", date: "2025-09-20" })
    // The notes the move replaced follow, in the order of their match: both are past.
    expect(hits.map((hit) => hit.date).sort()).toEqual(["2024-03-02", "2024-08-19", "2025-09-20"])
  })

  it("keeps date windows exact under the recency prior", async () => {
    await note("2024-03-02-address.md", "Our home address is Lindenstraße 14, Berlin.")
    await note("2025-09-20-moved.md", "We moved! New home address: Hafenweg 3, Hamburg.")
    const hits = await memory.search(A, { query: "home address", before: new Date(2024, 11, 31, 23, 59), limit: 5 })
    expect(sources(hits)).toEqual(["memory/2024-03-02-address.md"])
  })

  it("finds a misspelt word's note, also one written after the index was built", async () => {
    await note("2025-01-01-bill.md", "Paid the dentist bill for the crown.")
    await note("2025-01-02-filler.md", "Bought bread and milk.")
    await note("2025-01-03-filler.md", "Walk in the park with Anna.")
    expect(sources(await memory.search(A, { query: "dentst", limit: 5 }))).toEqual(["memory/2025-01-01-bill.md"])
    const { path } = await memory.remember(A, "The plumber fixes the sink on Wednesday", false)
    expect(sources(await memory.search(A, { query: "plumer", limit: 5 }))).toEqual([path])
  })

  it("ranks a note with the word as typed above one that only has a correction of it", async () => {
    await note("2025-01-01-plumber.md", "The plumber comes on Monday.")
    await note("2025-01-02-plumer.md", "Plumer is the name of the new neighbour.")
    await note("2025-01-03-filler.md", "Bought bread and milk.")
    const hits = await memory.search(A, { query: "plumer", limit: 5 })
    expect(hits[0]!.source).toBe("memory/2025-01-02-plumer.md")
  })

  it("finds German notes by inflected forms and compounds", async () => {
    await note("2025-01-14-kita.md", "Kita-Gutschein für Mia muss bis 31. März beim Bezirksamt verlängert werden.")
    await note("2025-02-04-abholung.md", "Die Abholung von Mia übernimmt dienstags Oma Ingrid.")
    await note("2025-11-18-zahnarzt.md", "Zahnarzttermin am 14. Dezember um 9 Uhr bei Dr. Hoffmann.")
    await note("2025-01-03-filler.md", "Einkauf: Milch, Brot und Käse besorgt.")
    expect(sources(await memory.search(A, { query: "Kitagutschein", limit: 1 }))).toEqual(["memory/2025-01-14-kita.md"])
    expect(sources(await memory.search(A, { query: "Wer hat Mia abgeholt", limit: 1 }))).toEqual(["memory/2025-02-04-abholung.md"])
    expect(sources(await memory.search(A, { query: "Termin beim Zahnarzt", limit: 1 }))).toEqual(["memory/2025-11-18-zahnarzt.md"])
  })

  it("cuts a German note's snippet around its inflected match", async () => {
    const filler = "Heute war im Büro viel los, und am Abend haben wir noch lange gekocht. ".repeat(4)
    await note("2025-02-04-abholung.md", `${filler} Die Abholung von Mia übernimmt dienstags Oma Ingrid. ${filler}`)
    const [hit] = await memory.search(A, { query: "abgeholt", limit: 1 })
    expect(hit!.content).toContain("Die Abholung von Mia")
  })
})
