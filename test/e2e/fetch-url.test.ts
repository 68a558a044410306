import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, expect, it } from "vitest"
import { byRole, startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { scriptedEnv } from "../support/e2e.ts"
import { StewardProcess } from "../support/process.ts"
import { afterTool, say } from "../support/scripts.ts"

let model: ModelServer | undefined
let page: Server | undefined
let steward: StewardProcess | undefined
const dataDir = mkdtempSync(join(tmpdir(), "steward-e2e-fetch-"))

afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await model?.close()
  await new Promise((resolve) => (page ? page.close(resolve) : resolve(undefined)))
  rmSync(dataDir, { recursive: true, force: true })
})

// The HTML-to-text conversion runs in a worker thread the build must ship (dist/html-text-worker.js):
// the sources under test ran it from src/, so only the built program shows it missing.
it("reads an HTML page with fetch_url in the built program", async () => {
  page = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    res.end("<html><head><title>Tides</title><script>var x = 1</script></head><body><h1>Tide table</h1><p>High water at <b>06:42</b> in Husum.</p></body></html>")
  })
  await new Promise<void>((resolve) => page!.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/tides`
  model = await startModelServer(
    byRole({
      teller: (req) => {
        if (req.lastUserText.startsWith("<task-results>")) return say(req.lastUserText.match(/PAGE: (.*)/)?.[1] ?? "no page text")
        return afterTool(req) ? { text: "" } : { toolCalls: [{ name: "delegate", args: { prompt: `Read ${url}` } }] }
      },
      planner: (req) => (afterTool(req) ? { text: "dispatched" } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
      worker: (req) => {
        if (!afterTool(req)) return { toolCalls: [{ name: "fetch_url", args: { url } }] }
        return { text: `PAGE: ${req.lastToolResults[0]!.content.replace(/\s+/g, " ")}` }
      },
    }),
  )
  steward = StewardProcess.start({ ...scriptedEnv(dataDir, model.url), FETCH_ALLOW_HOSTS: "127.0.0.1" })
  steward.send("when is high water?")
  await steward.waitFor((p) => p.replies.length >= 1, "the answer", 30_000)
  expect(steward.replies[0]).toContain("High water at 06:42 in Husum")
  expect(steward.replies[0]).not.toContain("var x")
  expect(steward.replies[0]).not.toMatch(/Cannot find module|worker/i)
})
