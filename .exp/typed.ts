import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generate, loadChunks, makeQueries, mulberry32 } from "./bench10.ts"
import bm25 from "wink-bm25-text-search"
import { terms } from "../src/memory/text.ts"
const root = await mkdtemp(join(tmpdir(), "exp-"))
await generate(join(root, "shared"), 10000, mulberry32(10000))
const chunks = await loadChunks(join(root, "shared"))
const queries = makeQueries(chunks, mulberry32(10001))
const e = bm25()
e.defineConfig({ fldWeights: { body: 1 } })
e.definePrepTasks([(x: any) => (typeof x === "string" ? terms(x) : x)])
chunks.forEach((c, i) => e.addDoc({ body: terms(c.text) }, i))
e.consolidate()
let t = performance.now()
const docs = (e as any).getDocs(), tokens = (e as any).getTokens()
const counts = new Int32Array(Object.keys(tokens).length)
for (let id = 0; id < chunks.length; id++) for (const k in docs[id].freq) counts[+k]++
const ids = counts.map(() => 0) as any; const postings: Int32Array[] = [], weights: Float32Array[] = []
for (let k = 0; k < counts.length; k++) { postings.push(new Int32Array(counts[k])); weights.push(new Float32Array(counts[k])) }
const fill = new Int32Array(counts.length)
for (let id = 0; id < chunks.length; id++) { const f = docs[id].freq; for (const k in f) { const x = +k; postings[x][fill[x]] = id; weights[x][fill[x]++] = f[k] } }
console.log("postings build", performance.now() - t)
const scores = new Float64Array(chunks.length)
function search(q: string, limit: number) {
  const touched: number[] = []
  for (const term of terms(q)) { const k = tokens[term]; if (k === undefined) continue; const p = postings[k], w = weights[k]; for (let i = 0; i < p.length; i++) { const id = p[i]; if (scores[id] === 0) touched.push(id); scores[id] += w[i] } }
  const top: Array<[number, number]> = []
  for (const id of touched) { const s = scores[id]; scores[id] = 0; if (top.length < limit) { top.push([id, s]); top.sort((a, b) => b[1] - a[1]) } else if (s > top[limit - 1][1]) { top[limit - 1] = [id, s]; top.sort((a, b) => b[1] - a[1]) } }
  return top
}
const p = (ts: number[]) => { ts.sort((a, b) => a - b); return `p50 ${ts[ts.length >> 1].toFixed(3)} p99 ${ts[Math.floor(ts.length * .99)].toFixed(3)}` }
for (let r = 0; r < 2; r++) {
  const a: number[] = [], b: number[] = []
  let same = 0
  for (const q of queries) { let s = performance.now(); const x = e.search(q.text, 5); a.push(performance.now() - s); s = performance.now(); const y = search(q.text, 5); b.push(performance.now() - s); if (String(x.map(h => +h[0])) === String(y.map(h => h[0]))) same++ }
  console.log("wink", p(a), "| typed", p(b), "same top5", same)
}
