import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { byRole, startModelServer, type ChatRequest, type ModelServer, type Reply } from "../fakes/model-server.ts"
import { StewardProcess } from "../support/process.ts"

let server: ModelServer | undefined
let steward: StewardProcess | undefined
let dataDir: string

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-shutdown-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await server?.close()
  server = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
const reply = (text: string): Reply => ({ toolCalls: [{ name: "reply", args: { text } }] })

/** A Teller whose first call is held until `release` is called (or hangs for good with `forever`). */
function heldTeller(forever = false) {
  let started!: () => void
  let release!: () => void
  const callStarted = new Promise<void>((resolve) => (started = resolve))
  const released = new Promise<Reply>((resolve) => (release = () => resolve(reply("Here you are."))))
  let calls = 0
  const script = byRole({
    teller: (req) => {
      if (afterTool(req)) return { text: "" }
      if (++calls > 1) return reply("Here you are, after the restart.")
      started()
      return forever ? { hang: true } : released
    },
  })
  return { script, callStarted, release: () => release() }
}

const env = () => ({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server!.url, MODEL_MAX_RETRIES: "0" })

/** Node processes running Steward's build on this test's DATA_DIR. */
function stewardsRunning(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const [program, script] = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
        return program!.endsWith("node") && script === "dist/main.js" && readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`DATA_DIR=${dataDir}`)
      } catch {
        return false // gone meanwhile, or not ours to read
      }
    })
}

describe("SIGTERM and SIGINT (real program)", () => {
  it("SIGTERM lets a running model call finish, sends its reply, and exits 0", async () => {
    const teller = heldTeller()
    server = await startModelServer(teller.script)
    steward = StewardProcess.start({ ...env(), LOG_LEVEL: "info" })
    steward.send("hello")
    await teller.callStarted
    steward.child.kill("SIGTERM")
    await steward.waitFor((p) => p.logs.some((line) => String(line.msg).startsWith("taking no new input")), "the input to close")
    // Input is closed by now: this line is not taken.
    steward.send("one more thing")
    setTimeout(teller.release, 300)
    expect(await steward.exited).toBe(0)
    expect(steward.replies).toEqual(["Here you are."])
    expect(JSON.stringify(server.requests.map((request) => request.body.messages))).not.toContain("one more thing")
  })

  it("SIGINT stops a call that outlasts SHUTDOWN_GRACE, exits 0, and the turn runs again at the next start", async () => {
    const teller = heldTeller(true)
    server = await startModelServer(teller.script)
    steward = StewardProcess.start({ ...env(), SHUTDOWN_GRACE: "1" })
    steward.send("hello")
    await teller.callStarted
    const signalled = performance.now()
    steward.child.kill("SIGINT")
    expect(await steward.exited).toBe(0)
    expect(performance.now() - signalled).toBeLessThan(6000)
    expect(steward.replies).toEqual([])

    steward = StewardProcess.start(env())
    await steward.waitFor((p) => p.replies.length >= 1, "the reply after the restart")
    expect(steward.replies).toEqual(["Here you are, after the restart."])
  })

  it("SIGTERM to `npm start` stops Steward too: exit 0 and no node process left behind", async () => {
    const teller = heldTeller()
    server = await startModelServer(teller.script)
    steward = StewardProcess.start({ ...env(), ADMIN_PORT: "0", LOG_LEVEL: "info" }, { viaNpm: true })
    await steward.adminPort()
    expect(stewardsRunning()).toHaveLength(1)
    steward.child.kill("SIGTERM")
    expect(await steward.exited).toBe(0)
    expect(stewardsRunning()).toEqual([])
    expect(steward.logs.some((line) => line.msg === "stopping" && line.why === "SIGTERM")).toBe(true)
  })
})
