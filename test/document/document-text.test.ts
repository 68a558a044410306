import { monitorEventLoopDelay } from "node:perf_hooks"
import { describe, expect, it } from "vitest"
import { DOCUMENT_LIMITS, DocumentReader } from "../../src/document/document-text.ts"
import { ParseRefused } from "../../src/untrusted/isolated.ts"
import { DOCUMENT_TIME_MS, MAX_UNZIPPED_BYTES, PARSER_HEAP_MB, PARSER_MEMORY_GROWTH_MB } from "../../src/untrusted/limits.ts"
import { docxBombs, docxWith, pdfBomb } from "../files/bombs.ts"
import { twoPagePdf } from "../files/zip.ts"

const never = new AbortController().signal
const MIB = 1024 * 1024
const PLAIN = docxWith({ stored: Buffer.from('<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Still readable</w:t></w:r></w:p></w:body></w:document>') })

/** Runs `work` and says how long the main thread was held at most meanwhile (ms). */
async function loopDelayDuring<T>(work: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; maxDelayMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  const [result] = await Promise.allSettled([work()])
  histogram.disable()
  return { result: result!, maxDelayMs: histogram.max / 1e6 }
}

describe("documents are read at arm's length", () => {
  it("reads under the named limits by default", () => {
    expect(DOCUMENT_LIMITS).toEqual({ timeMs: DOCUMENT_TIME_MS, heapMb: PARSER_HEAP_MB, memoryGrowthMb: PARSER_MEMORY_GROWTH_MB })
  })

  it("refuses every kind of docx zip bomb in a line, without holding the server, and reads the next document", async () => {
    const reader = new DocumentReader()
    const bombs = await docxBombs(MAX_UNZIPPED_BYTES + 40 * MIB)
    for (const [kind, bomb] of Object.entries(bombs)) {
      expect(bomb.length, kind).toBeLessThan(400 * 1024) // small on disk
      const { result, maxDelayMs } = await loopDelayDuring(() => reader.text("docx", bomb, never))
      expect(result.status, kind).toBe("rejected")
      const reason = (result as PromiseRejectedResult).reason
      expect(reason, kind).toBeInstanceOf(ParseRefused)
      expect(reason.message, kind).toMatch(/^it (unpacks to more than 64 MiB \(a zip bomb\?\)|holds more than 2000 files inside)$/)
      expect(maxDelayMs, kind).toBeLessThan(1000)
    }
    expect(await reader.text("docx", PLAIN, never)).toBe("Still readable")
  })

  it("stops a PDF that fills the memory, without the server feeling it, and reads the next PDF", async () => {
    const reader = new DocumentReader({ timeMs: 20_000, heapMb: 128, memoryGrowthMb: 96 })
    const bomb = await pdfBomb(256 * MIB)
    expect(bomb.length).toBeLessThan(MIB)
    const before = process.memoryUsage.rss()
    const { result, maxDelayMs } = await loopDelayDuring(() => reader.text("pdf", bomb, never))
    expect(result.status).toBe("rejected")
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(ParseRefused)
    expect((result as PromiseRejectedResult).reason.message).toMatch(/^reading it (needed more than \d+ MB of memory|took longer than 20 s)$/)
    expect(maxDelayMs).toBeLessThan(1000)
    expect(process.memoryUsage.rss() - before).toBeLessThan(400 * MIB)
    expect(await reader.text("pdf", twoPagePdf("one", "two"), never)).toBe("--- page 1 of 2 ---\none\n\n--- page 2 of 2 ---\ntwo")
  })

  it("stops a document that takes too long", async () => {
    const reader = new DocumentReader({ timeMs: 200, heapMb: 128, memoryGrowthMb: 4096 })
    const bomb = await pdfBomb(256 * MIB)
    await expect(reader.text("pdf", bomb, never)).rejects.toThrow(new ParseRefused("reading it took longer than 0.2 s"))
  })

  it("stops reading when the run is cancelled", async () => {
    const reader = new DocumentReader()
    const cancel = new AbortController()
    const reading = reader.text("pdf", await pdfBomb(256 * MIB), cancel.signal)
    cancel.abort(new Error("cancelled"))
    await expect(reading).rejects.toThrow("cancelled")
  })
})
