import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { ConsoleChannel } from "../../../adapters/console/console.ts"
import { byRole, startModelServer, type ModelServer } from "../../fakes/model-server.ts"

const ROOT = fileURLToPath(new URL("../../..", import.meta.url))

/** Streams that claim to be a terminal (readline then runs in terminal mode), or a pipe. */
function streams(tty: boolean) {
  const input = Object.assign(new PassThrough(), { isTTY: tty })
  const output = Object.assign(new PassThrough(), { isTTY: tty })
  let written = ""
  output.setEncoding("utf8").on("data", (chunk: string) => (written += chunk))
  return { input, output, written: () => written }
}

const handlers = { onMessage: async () => {}, commands: [] }
const MARKDOWN = "Some **bold** text:\n\n- one\n- two"

describe("console channel", () => {
  it("on pipes prints replies as the plain text, options with how to answer, and no working indicator", async () => {
    const io = streams(false)
    const channel = new ConsoleChannel(io.input, io.output)
    await channel.start(handlers)
    channel.activity("console:local", true)
    await channel.send("console:local", { text: MARKDOWN })
    await channel.send("console:local", { text: "Which colour?", buttons: [{ id: "q:0", label: "Red" }, { id: "q:1", label: "Blue" }] })
    await channel.stop()
    expect(io.written()).toBe(`steward: ${MARKDOWN}\nsteward: Which colour?\n  1. Red\n  2. Blue\n  (type a number or an option, or /skip)\n`)
  })

  it("in a terminal renders Markdown and shows working… in the prompt while Steward works", async () => {
    const io = streams(true)
    const channel = new ConsoleChannel(io.input, io.output)
    await channel.start(handlers)
    channel.activity("console:local", true)
    expect(io.written()).toContain("working… you> ")
    await channel.send("console:local", { text: MARKDOWN })
    channel.activity("console:local", false)
    await channel.stop()
    const shown = io.written()
    expect(shown).not.toContain("**bold**")
    expect(shown).toMatch(/Some .*bold.* text:/)
    expect(shown).toMatch(/\* one/)
  })
})

describe("console in a pseudo-terminal (real program under script(1))", () => {
  let server: ModelServer | undefined
  let dataDir: string | undefined
  afterEach(async () => {
    await server?.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  it("keeps logs out of the terminal (DATA_DIR/steward.log) and renders the reply", async () => {
    server = await startModelServer(byRole({ teller: (req) => (req.messages.at(-1)?.role === "tool" ? { text: "" } : { toolCalls: [{ name: "reply", args: { text: "It is **done**." } }] }) }))
    dataDir = mkdtempSync(join(tmpdir(), "steward-pty-"))
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TERM: "xterm", DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, ADMIN_PORT: "off", LOG_LEVEL: "info" }
    const child = spawn("script", ["-qefc", `${process.execPath} dist/main.js`, "/dev/null"], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] })
    let screen = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (screen += chunk))
    const until = async (predicate: () => boolean, what: string) => {
      for (const deadline = Date.now() + 15_000; !predicate(); await new Promise((resolve) => setTimeout(resolve, 20))) {
        if (Date.now() > deadline) throw new Error(`waiting for ${what}: ${JSON.stringify(screen)}`)
      }
    }
    await until(() => screen.includes("you> "), "the prompt")
    child.stdin.write("hello\r")
    const plain = () => screen.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")
    await until(() => plain().includes("steward: It is done."), "the reply")
    child.stdin.write("\x04") // Ctrl-D: input ends, Steward finishes and exits
    const code = await new Promise((resolve) => child.on("exit", resolve))
    expect(code).toBe(0)
    expect(screen).not.toContain("**done**")
    expect(screen).toContain("working… you> ")
    expect(screen).not.toContain('"level"')
    const logFile = join(dataDir, "steward.log")
    expect(existsSync(logFile) && readFileSync(logFile, "utf8")).toContain("Steward started")
  })
})
