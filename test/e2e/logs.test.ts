import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { StewardProcess } from "../support/process.ts"

let server: ModelServer | undefined
let steward: StewardProcess | undefined
let dataDir: string

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-logs-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await server?.close()
  server = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

const SECRET = "my dentist is Dr. Quillfeather on Elm Street"
// A provider that echoes the request in its error, as some gateways do.
const echoingError = () => ({ error: { status: 400, message: `invalid request: ${"x".repeat(5000)} ${SECRET}` } })

describe("logs (real program)", () => {
  it("a failed model call logs a short line — status, provider, model, request id — and nothing of the prompt, tools or the user's words", async () => {
    server = await startModelServer(echoingError)
    steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, MODEL_MAX_RETRIES: "0", LOG_LEVEL: "info" })
    steward.send(SECRET)
    await steward.waitFor((p) => p.logs.some((line) => (line.level as number) >= 40 && line.err !== undefined), "the failed call's log line", 60_000)
    const failed = steward.logs.find((line) => (line.level as number) >= 40 && line.err !== undefined)!
    expect(failed.err).toMatchObject({ type: "AI_APICallError", status: 400, provider: new URL(server.url).host, model: "scripted", requestId: expect.stringMatching(/^req_fake_\d+$/) })
    for (const line of steward.stderr.join("").split("\n")) {
      expect(line.length).toBeLessThan(2000)
      expect(line).not.toContain("Quillfeather")
      expect(line).not.toContain("You are") // the system prompt
      expect(line).not.toContain('"parameters"') // tool schemas
    }
  }, 120_000)

  it("at debug level the failed call is logged whole, for the one who asked for it", async () => {
    server = await startModelServer(echoingError)
    steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, MODEL_MAX_RETRIES: "0", LOG_LEVEL: "debug" })
    steward.send(SECRET)
    await steward.waitFor((p) => p.logs.some((line) => (line.level as number) >= 40 && line.err !== undefined), "the failed call's log line", 60_000)
    const failed = steward.logs.find((line) => (line.level as number) >= 40 && line.err !== undefined)!
    expect(JSON.stringify(failed.err)).toContain("Quillfeather")
  }, 120_000)

  it("after SIGTERM the last line says Steward stopped", async () => {
    server = await startModelServer(() => ({ text: "hi" }))
    steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, LOG_LEVEL: "info" })
    await steward.waitFor((p) => p.logs.some((line) => line.msg === "Steward started"), "start-up", 60_000)
    steward.child.kill("SIGTERM")
    expect(await steward.exited).toBe(0)
    expect(steward.logs.at(-1)).toMatchObject({ msg: "Steward stopped", why: "SIGTERM" })
  }, 120_000)
})
