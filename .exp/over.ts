import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generate, loadChunks, makeQueries, mulberry32 } from "./bench10.ts"
import { Memory } from "../src/memory/memory.ts"
const root = await mkdtemp(join(tmpdir(), "exp-"))
await generate(join(root, "shared"), 10000, mulberry32(10000))
const chunks = await loadChunks(join(root, "shared"))
const queries = makeQueries(chunks, mulberry32(10001))
const m = new Memory({ dir: root, scope: "shared" })
await m.rebuild("x")
const scope = (m as any).scopes.get(join(root, "shared")).index
const serving = scope.serving
const p = (ts: number[]) => { ts.sort((a, b) => a - b); return `p50 ${ts[ts.length >> 1].toFixed(3)} p99 ${ts[Math.floor(ts.length * .99)].toFixed(3)}` }
for (let round = 0; round < 2; round++) {
  const a: number[] = [], b: number[] = []
  for (const q of queries) { const s = performance.now(); await serving.search({ query: q.text, limit: 5, exclude: [] }); a.push(performance.now() - s) }
  for (const q of queries) { const s = performance.now(); await m.search("x", { query: q.text, limit: 5 }); b.push(performance.now() - s) }
  console.log("worker rtt", p(a), "| memory.search", p(b))
}
await m.close()
