import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { startModelServer, type ChatRequest, type ModelServer } from "../fakes/model-server.ts"
import { calling, chain, scriptedEnv } from "../support/e2e.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { StewardProcess } from "../support/process.ts"
import { mcpConfigFile } from "../mcp/support.ts"

// The MCP client side through the real Supervisor, agent loop, AI SDK and MCP client: a call
// that reports progress outlives MCP_TOOL_TIMEOUT and shows its progress as the task's status;
// the server's instructions reach the Worker's system prompt; /healthz and `steward status`
// list the servers.

const run = promisify(execFile)
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href
const PROTOCOL_STDIO = new URL("../fakes/mcp-protocol-stdio.ts", import.meta.url).pathname
const protoEnv = (extra: Record<string, string> = {}) => ({ MCP_CONFIG: mcpConfigFile({ proto: { command: process.execPath, args: ["--import", TSX, PROTOCOL_STDIO] } }), ...extra })

let harness: Harness | undefined
let steward: StewardProcess | undefined
let models: ModelServer | undefined
let dataDir: string | undefined
afterEach(async () => {
  await harness?.close()
  if (steward && steward.child.exitCode === null) await steward.kill()
  await models?.close()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  harness = steward = models = dataDir = undefined
})

describe("MCP progress and instructions for Workers", () => {
  it("a 2.4 s call reporting progress completes under MCP_TOOL_TIMEOUT=1, its progress shown as the task's status", async () => {
    const seen: ChatRequest[] = []
    harness = await startHarness(chain(calling("proto_slow", { steps: 6, stepMs: 400 }, seen)), protoEnv({ MCP_TOOL_TIMEOUT: "1" }))
    await harness.channel.say("go slow")
    const [answer] = await harness.channel.waitForSent(1, undefined, 30_000)
    expect(answer!.text).toBe('Result: proto_slow said {"text":"done after 6 steps"}')
    const titles = harness.channel.progressUpdates.flatMap(({ update }) => update.tools.map((tool) => tool.title ?? ""))
    expect(titles).toContainEqual(expect.stringMatching(/^proto_slow .* — [1-6]\/6$/))
    const system = seen[0]!.body.messages.find((message) => message.role === "system")
    expect(JSON.stringify(system)).toContain("Always call proto_slow with steps of at least 2.")
  })
})

describe("MCP servers in /healthz and steward status", () => {
  it("lists each server with its state and tool count", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "steward-mcp-health-"))
    models = await startModelServer(() => ({ text: "" }))
    steward = await StewardProcess.start({ ...scriptedEnv(dataDir, models.url), ADMIN_PORT: "0", LOG_LEVEL: "info", ...protoEnv() })
    const health = await (await fetch(`http://127.0.0.1:${await steward.adminPort()}/healthz`)).json()
    expect(health.mcp).toEqual([{ name: "proto", state: "up", tools: 15, transport: "stdio" }])
    const env = { PATH: process.env.PATH, DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: models.url }
    const status = JSON.parse((await run(process.execPath, ["--import", "tsx", "src/cli.ts", "status", "--json"], { env, timeout: 30_000 })).stdout)
    expect(status.mcp).toEqual([{ name: "proto", state: "up", tools: 15, transport: "stdio" }])
    // A Steward process, its MCP server and a CLI process started on a loaded machine.
  }, 90_000)
})
