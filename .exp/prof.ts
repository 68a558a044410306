import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generate, loadChunks, makeQueries, mulberry32 } from "./bench10.ts"
import { ChunkIndex } from "../src/memory/bm25.ts"
import { terms } from "../src/memory/text.ts"
import { snippet } from "../src/memory/snippet.ts"
import { Memory } from "../src/memory/memory.ts"
const root = await mkdtemp(join(tmpdir(), "exp-"))
const random = mulberry32(10000)
await generate(join(root, "shared"), 10000, random)
const chunks = await loadChunks(join(root, "shared"))
const queries = makeQueries(chunks, random)
let t = performance.now()
const index = new ChunkIndex(chunks)
console.log("build in main", performance.now() - t)
const time = (label: string, f: (q: string) => unknown) => { for (const q of queries.slice(0, 50)) f(q.text); const ts: number[] = []; for (const q of queries) { const s = performance.now(); f(q.text); ts.push(performance.now() - s) } ts.sort((a, b) => a - b); console.log(label, "p50", ts[ts.length >> 1].toFixed(3), "p99", ts[Math.floor(ts.length * 0.99)].toFixed(3)) }
time("terms", (q) => terms(q))
time("index.search", (q) => index.search(q, terms(q), { exclude: new Set() }, 5))
time("search+snippet", (q) => { const qt = terms(q); const set = new Set(qt); return index.search(q, qt, { exclude: new Set() }, 5).map((h) => snippet(h.chunk.text, set)) })
const m = new Memory({ dir: root, scope: "shared" })
await m.rebuild("x")
const ts: number[] = []
for (const q of queries.slice(0, 50)) await m.search("x", { query: q.text, limit: 5 })
for (const q of queries) { const s = performance.now(); await m.search("x", { query: q.text, limit: 5 }); ts.push(performance.now() - s) }
ts.sort((a, b) => a - b); console.log("memory.search p50", ts[ts.length >> 1].toFixed(3))
const { setImmediate: nt } = await import("node:timers/promises")
const t2: number[] = []; for (let i = 0; i < 300; i++) { const s = performance.now(); await nt(); t2.push(performance.now() - s) } t2.sort((a, b) => a - b); console.log("setImmediate p50", t2[150].toFixed(3))
await m.close()
const prof = await import("node:inspector/promises")
const session = new prof.Session(); session.connect()
await session.post("Profiler.enable"); await session.post("Profiler.start")
for (let r = 0; r < 5; r++) for (const q of queries) index.search(q.text, terms(q.text), { exclude: new Set() }, 5)
const { profile } = await session.post("Profiler.stop") as any
const fs = await import("node:fs"); fs.writeFileSync("/tmp/search.cpuprofile", JSON.stringify(profile))
