import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { byRole } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool } from "../support/scripts.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const sendingReport = byRole({ teller: (req) => (afterTool(req) ? { text: "" } : { toolCalls: [{ name: "send_file", args: { path: "out/report.pdf", caption: "The report" } }] }) })

describe("a file in the outbox", () => {
  it("is sent once, from its workspace path, after a crash that came before the platform took it", async () => {
    harness = await startHarness(sendingReport)
    mkdirSync(join(harness.dataDir, "workspace", "test-u1", "out"), { recursive: true })
    writeFileSync(join(harness.dataDir, "workspace", "test-u1", "out", "report.pdf"), "%PDF-")
    harness.channel.failures = 1_000
    await harness.channel.say("send the report")
    await harness.server.waitForRequests(2)
    await harness.restart()
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toEqual([
      { conversation: "test:c1", text: "The report", messageId: "m1", file: { path: join(harness.dataDir, "workspace", "test-u1", "out", "report.pdf"), name: "report.pdf", mimeType: "application/pdf" }, ref: expect.any(String) },
    ])
    // The replayed turn found its send_file call answered: the record, not a second call, carried the file over.
    expect(harness.server.requests.at(-1)!.body.messages.at(-1)!.role).toBe("tool")
  })
})
