import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generate, loadChunks, makeQueries, mulberry32 } from "./bench10.ts"
import { ChunkIndex } from "../src/memory/bm25.ts"
import { terms } from "../src/memory/text.ts"
import sqlite3 from "sqlite3"
const root = await mkdtemp(join(tmpdir(), "exp-"))
await generate(join(root, "shared"), 10000, mulberry32(10000))
const chunks = await loadChunks(join(root, "shared"))
const queries = makeQueries(chunks, mulberry32(10001))
const index = new ChunkIndex(chunks)
const db = new sqlite3.Database(":memory:")
const run = (sql: string, p: any[] = []) => new Promise<void>((r, j) => db.run(sql, p, (e) => (e ? j(e) : r())))
const all = (sql: string, p: any[]) => new Promise<any[]>((r, j) => db.all(sql, p, (e, rows) => (e ? j(e) : r(rows))))
await run("CREATE VIRTUAL TABLE chunks USING fts5(text, source UNINDEXED, tokenize = 'porter unicode61')")
await run("BEGIN"); for (const c of chunks) await run("INSERT INTO chunks (text, source) VALUES (?, ?)", [c.text, c.source]); await run("COMMIT")
let shown = 0
for (const q of queries) {
  const ours = index.search(terms(q.text), {}, 5).map((h) => chunks.indexOf(h.chunk))
  const fts = (await all("SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT 5", [q.text.split(" ").map((w) => `"${w}"`).join(" OR ")])).map((r) => r.rowid - 1)
  if (!ours.includes(q.target) && shown++ < 5) {
    console.log("Q:", q.text, "terms:", terms(q.text).join(" "), "fts ok:", fts.includes(q.target))
    console.log("  target terms:", terms(chunks[q.target].text).filter((t) => terms(q.text).includes(t)).join(" "), "len", terms(chunks[q.target].text).length)
    for (const id of ours.slice(0, 3)) console.log("  ours hit:", terms(chunks[id].text).filter((t) => terms(q.text).includes(t)).join(" "), "len", terms(chunks[id].text).length)
  }
}
