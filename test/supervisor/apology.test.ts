import { Writable } from "node:stream"
import pino from "pino"
import { afterEach, describe, expect, it } from "vitest"
import { byRole } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool } from "../support/scripts.ts"

/** What a provider's error may carry that no chat user may read. */
const INTERNAL = "upstream llm-gw-07.corp.internal:8443 failed: db password rejected"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { lines, log: pino({ level: "info" }, stream) }
}

/** The line logged under a reference. */
const loggedUnder = (lines: readonly string[], ref: string) => lines.find((line) => line.includes(`"ref":"${ref}"`))

describe("users see a generic apology; the details are in the log under its reference", () => {
  it("a Teller's provider error", async () => {
    const { lines, log } = capturedLog()
    harness = await startHarness(byRole({ teller: () => ({ error: { status: 400, message: INTERNAL } }) }), {}, log)
    await harness.channel.say("hello")
    const [sent] = await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(sent!.text).not.toMatch(/llm-gw|password|8443|upstream/)
    const ref = /reference: (ref-[0-9a-f]{8})\.$/.exec(sent!.text)?.[1]
    expect(sent!.text).toMatch(/^Sorry — I could not answer that because of an error on my side/)
    expect(loggedUnder(lines, ref!)).toContain(INTERNAL)
  })

  it("a task's provider error, in the report relayed to the user and in what the Teller reads", async () => {
    const { lines, log } = capturedLog()
    const tellerSaw: string[] = []
    harness = await startHarness(
      byRole({
        teller: (req) => {
          tellerSaw.push(req.lastUserText)
          if (req.lastUserText.includes("<task-results>")) return { toolCalls: [{ name: "no_such_tool", args: {} }] }
          return afterTool(req) ? { text: "" } : { toolCalls: [{ name: "delegate", args: { prompt: "do it" } }] }
        },
        planner: () => ({ error: { status: 400, message: INTERNAL } }),
      }),
      { TELLER_MAX_STEPS: "2" },
      log,
    )
    await harness.channel.say("go")
    await harness.app.supervisor.idle()
    const texts = harness.channel.sent.map((m) => m.text)
    expect(texts).toHaveLength(1)
    expect(texts[0]).toMatch(/^Results of your tasks:/)
    for (const text of [...texts, ...tellerSaw]) expect(text).not.toMatch(/llm-gw|password|8443/)
    const ref = /reference (ref-[0-9a-f]{8})/.exec(texts[0]!)?.[1]
    expect(loggedUnder(lines, ref!)).toContain(INTERNAL)
  })

  it("a silent turn names the tool that failed, not its error text", async () => {
    harness = await startHarness(
      byRole({ teller: () => ({ toolCalls: [{ name: "read_file", args: { path: "../../etc/secret-internal-path" } }] }) }),
      { TELLER_MAX_STEPS: "2" },
    )
    await harness.channel.say("hello")
    const [sent] = await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(sent!.text).not.toContain("secret-internal-path")
    expect(sent!.text).toBe("Sorry — I could not come up with an answer to that: my tools kept failing (read_file). Please try again or rephrase.")
  })
})

