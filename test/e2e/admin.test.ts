import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { byRole, startModelServer, type ChatRequest, type ModelServer } from "../fakes/model-server.ts"
import { startTelegramApi, type TelegramApi } from "../fakes/telegram-api.ts"
import { StewardProcess } from "../support/process.ts"

let server: ModelServer | undefined
let steward: StewardProcess | undefined
let telegram: TelegramApi | undefined
let dataDir: string

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-admin-"))
})
afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await server?.close()
  await telegram?.close()
  server = undefined
  telegram = undefined
  rmSync(dataDir, { recursive: true, force: true })
})

const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"

async function start(env: Record<string, string> = {}): Promise<StewardProcess> {
  server ??= await startModelServer(
    byRole({ teller: (req) => (afterTool(req) ? { text: "" } : { toolCalls: [{ name: "reply", args: { text: "Hi!" } }], usage: { prompt: 120, completion: 8, cached: 100 } }) }),
  )
  return StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url, MODEL_MAX_RETRIES: "0", ADMIN_PORT: "0", LOG_LEVEL: "info", ...env })
}

const get = (port: number, path: string) => fetch(`http://127.0.0.1:${port}${path}`)

/** The value of one sample line of the Prometheus text, e.g. `steward_outbox_backlog`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** A port nothing listens on: bound, then let go. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe("admin endpoints (real program)", () => {
  it("GET /healthz is 200 with the store and the console channel ok; /metrics counts model calls and tokens by role", async () => {
    steward = await start()
    const port = await steward.adminPort()
    const health = await get(port, "/healthz")
    expect(health.status).toBe(200)
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string }
    expect(await health.json()).toEqual({ status: "ok", version, uptimeSeconds: expect.any(Number), ok: true, store: { ok: true }, channels: { console: { ok: true, reconnects: 0 } }, mcp: [], reasons: [] })

    steward.send("hello")
    await steward.waitFor((p) => p.replies.length >= 1, "the reply")
    // One call: the reply ends the turn without another model call (the metric may lag the reply).
    const calls = 'steward_model_calls_total{role="teller",outcome="ok"}'
    const turns = 'steward_turns_total{outcome="completed"}'
    let text = ""
    for (const deadline = Date.now() + 10_000; (sample(text, calls) !== 1 || sample(text, turns) !== 1) && Date.now() < deadline; ) {
      const metrics = await get(port, "/metrics")
      expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/)
      text = await metrics.text()
    }
    expect(sample(text, calls)).toBe(1)
    expect(sample(text, turns)).toBe(1)
    expect(sample(text, 'steward_model_tokens_total{role="teller",kind="input"}')).toBeGreaterThanOrEqual(120)
    expect(sample(text, 'steward_model_tokens_total{role="teller",kind="cached_input"}')).toBe(100)
    expect(sample(text, 'steward_model_tokens_total{role="teller",kind="output"}')).toBeGreaterThanOrEqual(8)
    expect(sample(text, 'steward_task_queue_depth{role="worker"}')).toBe(0)
    expect(sample(text, 'steward_task_queue_depth{role="planner"}')).toBe(0)
    expect(sample(text, "steward_outbox_backlog")).toBe(0)
    expect(sample(text, 'steward_channel_up{channel="console"}')).toBe(1)
    expect(sample(text, 'steward_channel_reconnects_total{channel="console"}')).toBe(0)
    for (const name of ["steward_turns_total", "steward_trigger_firings_total", "steward_dedupe_hits_total"]) expect(text).toContain(`# TYPE ${name} counter`)
    // The process's own metrics (prom-client's defaults) and which version answers.
    expect(sample(text, `steward_build_info{version="${version}"}`)).toBe(1)
    for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "process_start_time_seconds"]) expect(text).toContain(`# TYPE ${name} `)
    expect((await get(port, "/nothing")).status).toBe(404)
  })

  it("reports an unreachable Telegram API within seconds with the URL tried, shows it in /healthz (503), and connects once the API is back", async () => {
    const apiPort = await freePort()
    const apiRoot = `http://127.0.0.1:${apiPort}`
    steward = await start({ TELEGRAM_BOT_TOKEN: "123:abc", TELEGRAM_API_ROOT: apiRoot, ALLOWED_USERS: "telegram:1001" })
    const port = await steward.adminPort()
    const reported = steward.logs.find((line) => String(line.msg).startsWith("could not reach the Telegram API"))
    expect(reported?.msg).toContain(`${apiRoot}/bot<token>/getMe`)
    expect(JSON.stringify(steward.logs)).not.toContain("123:abc")
    const down = await get(port, "/healthz")
    expect(down.status).toBe(503)
    const report = (await down.json()) as { status: string; reasons: string[] }
    expect(report.status).toBe("unhealthy")
    expect(report.reasons[0]).toMatch(new RegExp(`^telegram: could not reach the Telegram API at ${apiRoot}`))

    // The API comes up on that port; the retries (1 s, 2 s, …) find it.
    telegram = await startTelegramApi({ token: "123:abc", port: apiPort })
    await steward.waitFor((p) => p.logs.some((line) => line.msg === "reached the Telegram API"), "the reconnection", 15_000)
    await telegram.waitFor(() => telegram!.requests.some((request) => request.method === "getUpdates"))
    const up = await get(port, "/healthz")
    expect([up.status, ((await up.json()) as { channels: unknown }).channels]).toEqual([200, { telegram: { ok: true, reconnects: 0 } }])
  })
})
