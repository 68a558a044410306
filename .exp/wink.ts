import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generate, loadChunks, makeQueries, mulberry32 } from "./bench10.ts"
import bm25 from "wink-bm25-text-search"
import { terms } from "../src/memory/text.ts"
import { getHeapStatistics } from "node:v8"
const root = await mkdtemp(join(tmpdir(), "exp-"))
await generate(join(root, "shared"), 10000, mulberry32(10000))
const chunks = await loadChunks(join(root, "shared"))
const queries = makeQueries(chunks, mulberry32(10001))
function build(idOf: (i: number) => string | number) {
  const e = bm25()
  e.defineConfig({ fldWeights: { body: 1 }, ovFldNames: ["i"] })
  e.definePrepTasks([(x: any) => (typeof x === "string" ? terms(x) : x)])
  chunks.forEach((c, i) => e.addDoc({ body: terms(c.text), i }, idOf(i)))
  e.consolidate()
  return e
}
for (const [label, idOf] of [["numeric", (i: number) => i], ["string", (i: number) => `d${i}`]] as const) {
  const h0 = getHeapStatistics().used_heap_size
  const e = build(idOf as any)
  const ts: number[] = []
  for (let r = 0; r < 3; r++) for (const q of queries) { const s = performance.now(); e.search(q.text, 5); ts.push(performance.now() - s) }
  ts.sort((a, b) => a - b)
  console.log(label, "p50", ts[ts.length >> 1].toFixed(3), "heap MB", ((getHeapStatistics().used_heap_size - h0) / 2 ** 20).toFixed(0))
  const docs = e.getDocs() as any
  const anyDoc = docs[Object.keys(docs)[5]]
  console.log("  freq keys", Object.keys(anyDoc.freq).length, "%DebugPrint unavailable")
}
