import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { byRole, startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { StewardProcess } from "../support/process.ts"
import { afterTool, say } from "../support/scripts.ts"

let server: ModelServer | undefined
let steward: StewardProcess | undefined
let root: string

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "steward-private-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await server?.close()
  server = undefined
  rmSync(root, { recursive: true, force: true })
})

/** Every path under `dir` with its permission bits, folders marked with a trailing slash. */
function modes(dir: string): Record<string, string> {
  const found: Record<string, string> = {}
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    if (entry.isSymbolicLink()) continue
    found[path.slice(dir.length + 1) + (entry.isDirectory() ? "/" : "")] = (statSync(path).mode & 0o777).toString(8)
  }
  return found
}

/** A Teller that remembers a note, and a Worker that writes a file: memory, workspace, store and log all get written. */
const writingEverywhere = byRole({
  teller: (req) => {
    if (afterTool(req)) return { text: "" }
    if (req.lastUserText.startsWith("<task-results>")) return say("file written")
    return { toolCalls: [{ name: "remember", args: { content: "The user likes tea." } }, { name: "delegate", args: { prompt: "write the file" } }] }
  },
  planner: (req) => (afterTool(req) ? { text: "dispatched" } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
  worker: (req) => (afterTool(req) ? { text: "Saved notes/tea.md" } : { toolCalls: [{ name: "write_file", args: { path: "notes/tea.md", content: "tea" } }] }),
})

describe("private by default (the real program, started with a permissive umask)", () => {
  it.each([
    ["a new DATA_DIR is created 0700", (dir: string) => dir],
    [
      "an existing DATA_DIR others could read is tightened to 0700",
      (dir: string) => {
        mkdirSync(dir, { mode: 0o755 })
        chmodSync(dir, 0o755)
        return dir
      },
    ],
  ])("%s and every file written in it is 0600, every folder 0700", async (_, prepare) => {
    const dataDir = prepare(join(root, "data"))
    server = await startModelServer(writingEverywhere)
    const previous = process.umask(0o022) // the child inherits the usual umask
    try {
      steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, MODEL_MAX_RETRIES: "1", LOG_FILE: join(dataDir, "logs/steward.log"), LOG_LEVEL: "info" })
    } finally {
      process.umask(previous)
    }
    steward.send("remember that I like tea, and write it down")
    // A whole round trip of the real program: generous under a loaded machine, still bounded.
    await steward.waitFor((p) => p.replies.includes("file written"), "the Worker's file", 60_000)
    steward.child.stdin.end()
    expect(await steward.exited).toBe(0)
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe("700")
    const found = modes(dataDir)
    expect(Object.keys(found)).toEqual(expect.arrayContaining(["steward.sqlite", "logs/steward.log", "workspace/console-local/notes/tea.md"]))
    expect(Object.keys(found).some((path) => path.startsWith("memory/") && path.endsWith(".md"))).toBe(true)
    const loose = Object.entries(found).filter(([path, mode]) => mode !== (path.endsWith("/") ? "700" : "600"))
    expect(loose).toEqual([])
  }, 120_000)
})
