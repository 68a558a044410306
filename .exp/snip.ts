import { snippet } from "../src/memory/snippet.ts"
import { terms, termSpans } from "../src/memory/text.ts"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generate, loadChunks, makeQueries, mulberry32 } from "./bench10.ts"
const root = await mkdtemp(join(tmpdir(), "exp-"))
await generate(join(root, "shared"), 2000, mulberry32(10000))
const chunks = await loadChunks(join(root, "shared"))
const q = new Set(terms(chunks[0].text).slice(0, 3))
let t = performance.now()
for (let r = 0; r < 5; r++) for (const c of chunks) termSpans(c.text)
console.log("termSpans per chunk us", ((performance.now() - t) / chunks.length / 5 * 1000).toFixed(1), "avg len", chunks.reduce((a, c) => a + c.text.length, 0) / chunks.length)
t = performance.now()
for (let r = 0; r < 5; r++) for (const c of chunks) terms(c.text)
console.log("terms per chunk us", ((performance.now() - t) / chunks.length / 5 * 1000).toFixed(1))
t = performance.now()
for (let r = 0; r < 5; r++) for (const c of chunks) snippet(c.text, q)
console.log("snippet per chunk us", ((performance.now() - t) / chunks.length / 5 * 1000).toFixed(1))
