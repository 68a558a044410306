import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, expect, it } from "vitest"
import { missingRuntimeFiles } from "../../scripts/runtime-files.mjs"

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function dist(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "steward-dist-"))
  dirs.push(dir)
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

it("finds everything the built program loads by URL in dist/ (the global setup built it)", () => {
  expect(missingRuntimeFiles("dist")).toEqual([])
})

it("names a worker the build left out, whichever way its URL is written", () => {
  const dir = dist({
    "main.js": 'const a = new URL("./html-text-worker.mjs", import.meta.url)\nconst b = new URL(import.meta.url.endsWith(".ts") ? "./gone.mjs" : "./gone.js", import.meta.url)\n',
    "chunk-1.js": 'new URL(import.meta.url.endsWith(".ts") ? "./here.mjs" : "./here.js", import.meta.url)',
    "here.js": "",
  })
  expect(missingRuntimeFiles(dir)).toEqual(['main.js: "./html-text-worker.mjs"', 'main.js: import.meta.url.endsWith(".ts") ? "./gone.mjs" : "./gone.js"'])
})
