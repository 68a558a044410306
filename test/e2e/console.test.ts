import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { byRole, sequence, startModelServer, type ChatRequest, type ModelServer, type Reply, type Script } from "../fakes/model-server.ts"
import { StewardProcess } from "../support/process.ts"

const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
const replyCall = (text: string) => ({ name: "reply", args: { text } })
const reply = (text: string): Reply => ({ toolCalls: [replyCall(text)] })

let server: ModelServer | undefined
let steward: StewardProcess | undefined
let dataDir: string

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-e2e-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await server?.close()
  server = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

async function start(script: Script, env: Record<string, string> = {}): Promise<StewardProcess> {
  server ??= await startModelServer(script)
  return StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, MODEL_MAX_RETRIES: "1", ...env })
}

/** Teller: acknowledges and delegates a user message; summarises results when woken with them. */
function teller(req: ChatRequest): Reply {
  if (afterTool(req)) return { text: "" }
  if (req.lastUserText.startsWith("<task-results>")) return reply(`Done: ${req.lastUserText.match(/Saved \S+/)?.[0] ?? "nothing saved"} (${req.lastUserText.match(/status="\w+"/g)?.join(", ")})`)
  return { toolCalls: [replyCall("On it."), { name: "delegate", args: { prompt: `Write a note about: ${req.lastUserText}` } }] }
}

function planner(req: ChatRequest): Reply {
  if (afterTool(req)) return { text: "One worker dispatched." }
  return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText, priority: 7 } }] }
}

describe("console end to end (real program, real AI SDK, scripted model over HTTP)", () => {
  it("runs a Teller → Planner → Worker → Teller round trip, then exits when input ends", async () => {
    steward = await start(
      byRole({
        teller,
        planner,
        worker: (req) => (afterTool(req) ? { text: "Saved notes/cats.md" } : { toolCalls: [{ name: "write_file", args: { path: "notes/cats.md", content: "Cats sleep a lot." } }] }),
      }),
    )
    steward.send("cats")
    await steward.waitFor((p) => p.replies.length >= 2, "the final reply")
    expect(steward.replies).toEqual(["On it.", 'Done: Saved notes/cats.md (status="completed", status="completed")'])
    // Each user has a workspace of their own: console:local's is workspace/console-local.
    expect(readFileSync(join(dataDir, "workspace/console-local/notes/cats.md"), "utf8")).toBe("Cats sleep a lot.")
    expect(steward.lines.some((line) => line.includes("write_file notes/cats.md"))).toBe(true) // live progress
    steward.child.stdin.end()
    expect(await steward.exited).toBe(0)
    expect(steward.replies).toHaveLength(2)
  })

  it("recovers from a malformed tool call", async () => {
    steward = await start(byRole({ teller: sequence({ toolCalls: [{ name: "reply", args: "{not json" }] }, reply("Sorry, here it is."), { text: "" }) }))
    steward.send("hello")
    await steward.waitFor((p) => p.replies.length >= 1, "a reply")
    steward.child.stdin.end()
    expect(await steward.exited).toBe(0)
    expect(steward.replies).toEqual(["Sorry, here it is."])
    expect(server!.requests[1]!.body.messages.at(-1)!.content).toMatch(/Invalid input for tool reply/)
  })

  it("survives SIGKILL during a Worker task: after a restart on the same DATA_DIR exactly one final reply arrives", async () => {
    let workerCalls = 0
    let firstWorkerCall!: () => void
    const workerStarted = new Promise<void>((resolve) => (firstWorkerCall = resolve))
    const script = byRole({
      teller,
      planner,
      worker: (req) => {
        if (afterTool(req)) return { text: "Saved notes/after-crash.md" }
        workerCalls++
        if (workerCalls === 1) {
          firstWorkerCall()
          return { hang: true }
        }
        return { toolCalls: [{ name: "write_file", args: { path: "notes/after-crash.md", content: "ok" } }] }
      },
    })
    steward = await start(script)
    steward.send("crash test")
    await steward.waitFor((p) => p.replies.length >= 1, "the acknowledgement")
    await workerStarted
    expect(await steward.kill("SIGKILL")).toBe(null)
    const before = steward.replies

    steward = await start(script)
    await steward.waitFor((p) => p.replies.length >= 1, "the final reply after restart")
    steward.child.stdin.end()
    expect(await steward.exited).toBe(0)
    expect(before).toEqual(["On it."])
    expect(steward.replies).toEqual(['Done: Saved notes/after-crash.md (status="completed", status="completed")'])
    expect(workerCalls).toBe(2)
  })

  it("exits with code 2 and one clear line for a bad configuration", async () => {
    steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:x", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", WORKER_CONCURRENCY: "lots" })
    expect(await steward.exited).toBe(2)
    expect(steward.stderr.join("").trim()).toBe('steward: WORKER_CONCURRENCY: expected a whole number from 1 to 64, got "lots"')
  })
})
