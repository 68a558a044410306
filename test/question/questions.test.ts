import { writeFileSync } from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import { byRole, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, recorded, say } from "../support/scripts.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})


/** A Teller that asks once per user message and reports the answer it is resumed with. */
function askingTeller(args: Record<string, unknown>) {
  return (req: ChatRequest): Reply => {
    const answer = req.lastToolResults.find((r) => r.toolName === "ask_user")
    if (answer) return say(`got ${answer.content}`)
    if (afterTool(req)) return { text: "" }
    if (req.lastUserText.includes("<task-results>")) return say("results arrived")
    return { toolCalls: [{ name: "ask_user", args }] }
  }
}

/** Keeps every request a script saw, parsed, for assertions. */

const colours = { question: "Which colour?", options: ["Red", "Blue"], default: "Red", timeout: 3600 }

describe("ask_user", () => {
  it("shows the options as buttons, ends the turn, and resumes the same call with a button press", async () => {
    const teller = recorded(askingTeller(colours))
    harness = await startHarness(byRole({ teller: teller.script }))
    const { channel } = harness
    await channel.say("paint the fence")
    const [question] = await channel.waitForSent(1)
    expect(question!.text).toMatch(/^Which colour\?/)
    expect(question!.buttons?.map((b) => b.label)).toEqual(["Red", "Blue"])
    expect(question!.buttons!.every((b) => Buffer.byteLength(b.id) <= 64)).toBe(true)
    await harness.app.supervisor.idle()
    expect(teller.requests).toHaveLength(1) // the turn ended at the call: no further step

    await channel.press("Blue")
    const sent = await channel.waitForSent(2)
    expect(sent[1]!.text).toBe('got {"answer":"Blue","source":"user"}')
    await channel.waitFor(() => channel.edits.length === 1, "the question's edit")
    expect(channel.edits[0]).toMatchObject({ messageId: "m1", text: "Which colour?\n\nAnswer: Blue" })
    // Resumed, not restarted: the request still holds the original message and the call.
    const resumed = teller.requests[1]!
    expect(JSON.stringify(resumed.messages)).toContain("paint the fence")
    expect(resumed.lastToolResults.map((r) => r.toolName)).toEqual(["ask_user"])
  })

  it("takes typed text equal to an option in any case or its number, and hints at the options otherwise", async () => {
    harness = await startHarness(byRole({ teller: askingTeller(colours) }))
    const { channel } = harness
    await channel.say("paint the fence")
    await channel.waitForSent(1)
    await channel.say("green please")
    const [, hint] = await channel.waitForSent(2)
    expect(hint!.text).toBe("Please answer with one of: 1. Red · 2. Blue")
    await channel.say("bLuE")
    expect((await channel.waitForSent(3))[2]!.text).toBe('got {"answer":"Blue","source":"user"}')

    await channel.say("again")
    await channel.waitForSent(4)
    await channel.say("1")
    expect((await channel.waitForSent(5))[4]!.text).toBe('got {"answer":"Red","source":"user"}')
  })

  it("takes /skip as the default, and text that is no option as the answer once the options were shown again", async () => {
    harness = await startHarness(byRole({ teller: askingTeller(colours) }))
    const { channel } = harness
    await channel.say("paint the fence")
    await channel.waitForSent(1)
    await channel.say("/skip")
    expect((await channel.waitForSent(2))[1]!.text).toBe('got {"answer":"Red","source":"default"}')

    await channel.say("paint the shed")
    await channel.waitForSent(3)
    await channel.say("green please")
    expect((await channel.waitForSent(4))[3]!.text).toBe("Please answer with one of: 1. Red · 2. Blue")
    await channel.say("green, really")
    expect((await channel.waitForSent(5))[4]!.text).toBe('got {"answer":"green, really","source":"user"}')
  })

  it("takes any typed text as the answer to a question without options", async () => {
    harness = await startHarness(byRole({ teller: askingTeller({ question: "Your name?" }) }))
    await harness.channel.say("hi")
    await harness.channel.waitForSent(1)
    await harness.channel.say("Ada Lovelace")
    expect((await harness.channel.waitForSent(2))[1]!.text).toBe('got {"answer":"Ada Lovelace","source":"user"}')
  })

  it("uses the default when the deadline passes and says so in the question message", async () => {
    harness = await startHarness(byRole({ teller: askingTeller({ ...colours, timeout: 1 }) }))
    const { channel } = harness
    await channel.say("paint the fence")
    await channel.waitForSent(1)
    expect((await channel.waitForSent(2, undefined, 5000))[1]!.text).toBe('got {"answer":"Red","source":"default"}')
    await channel.waitFor(() => channel.edits.length === 1, "the question's edit")
    expect(channel.edits[0]!.text).toBe("Which colour?\n\nNo answer — used default: Red")
    // A late press on the closed question changes nothing.
    await channel.press("Blue")
    await harness.app.supervisor.idle()
    expect(channel.sent).toHaveLength(2)
  })

  it("answers with source timeout and an empty answer when there is no default", async () => {
    harness = await startHarness(byRole({ teller: askingTeller({ question: "Anything else?", timeout: 1 }) }))
    await harness.channel.say("hi")
    expect((await harness.channel.waitForSent(2, undefined, 5000))[1]!.text).toBe('got {"answer":"","source":"timeout"}')
    await harness.channel.waitFor(() => harness!.channel.edits.length === 1, "the question's edit")
    expect(harness.channel.edits[0]!.text).toBe("Anything else?\n\nNo answer")
  })

  it("keeps task results behind an open question and hands them over after the answer", async () => {
    let planned = false
    const teller = recorded((req) => {
      if (!planned) {
        planned = true
        return { toolCalls: [{ name: "delegate", args: { prompt: "look it up" } }, { name: "ask_user", args: colours }] }
      }
      return askingTeller(colours)(req)
    })
    harness = await startHarness(
      byRole({
        teller: teller.script,
        planner: (req) => (afterTool(req) ? { text: "planned" } : { text: "looked it up" }),
      }),
    )
    const { channel } = harness
    await channel.say("start")
    await channel.waitForSent(1)
    // The Planner finishes while the question is open; its report must wait for the answer.
    await harness.server.waitForRequests(2)
    await harness.app.supervisor.idle()
    expect(channel.sent).toHaveLength(1)
    await channel.press("Red")
    await channel.waitForSent(2)
    expect(channel.sent[1]!.text).toBe('got {"answer":"Red","source":"user"}')
    const resumed = teller.requests.find((r) => r.lastToolResults.some((t) => t.toolName === "ask_user"))!
    expect(JSON.stringify(resumed.messages)).toContain("<task-results>")
  })

  it("runs commands while a question is open: /tasks answers without touching it, /new closes it and starts afresh", async () => {
    const teller = recorded(askingTeller({ question: "Your name?" }))
    harness = await startHarness(byRole({ teller: teller.script }))
    const { channel } = harness
    await channel.say("hi")
    await channel.waitForSent(1)
    await channel.say("/tasks")
    expect((await channel.waitForSent(2))[1]!.text).toMatch(/^No tasks are queued or running/)
    expect(harness.app.supervisor["questions"].openIn("test:c1", "ask_user")).toBeDefined()

    await channel.say("/new")
    expect((await channel.waitForSent(3))[2]!.text).toMatch(/^Started a fresh conversation/)
    await channel.waitFor(() => channel.edits.length === 1, "the question's edit")
    expect(channel.edits[0]!.text).toBe("Your name?\n\n(no longer needed)")
    // Later text is a message to the new session, not an answer to the closed question.
    await channel.say("hello again")
    await channel.waitForSent(4)
    const fresh = teller.requests.at(-1)!
    expect(fresh.lastUserText).toBe("hello again")
    expect(JSON.stringify(fresh.messages)).not.toContain('"hi"')
  })

  it("rejects bad arguments with a clear error the model sees", async () => {
    let attempt = 0
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (attempt++ === 0) return { toolCalls: [{ name: "ask_user", args: { question: "Pick", options: ["A", "B"], default: "C" } }] }
          return say(`error: ${req.lastToolResults[0]?.content ?? ""}`)
        },
      }),
    )
    await harness.channel.say("hi")
    const [reply] = await harness.channel.waitForSent(1)
    expect(reply!.text).toMatch(/default must be one of options/)
  })

  it("resolves a question whose deadline passed while Steward was down at start-up, like a timeout", async () => {
    harness = await startHarness(byRole({ teller: askingTeller({ ...colours, timeout: 2 }) }))
    await harness.channel.say("paint the fence")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle() // the question's delivery is on record
    // A crash, and the deadline passes while Steward is down.
    await harness.restart({ whileDown: () => new Promise((resolve) => setTimeout(resolve, 2100)) })
    const sent = await harness.channel.waitForSent(1, undefined, 5000)
    expect(sent[0]!.text).toBe('got {"answer":"Red","source":"default"}')
    await harness.channel.waitFor(() => harness!.channel.edits.length === 1, "the question's edit")
  })

  it("keeps an open question's deadline across a restart, and a press after it answers once", async () => {
    harness = await startHarness(byRole({ teller: askingTeller(colours) }))
    await harness.channel.say("paint the fence")
    const [question] = await harness.channel.waitForSent(1)
    await harness.restart({ graceful: true })
    await harness.channel.say("Blue", "test:c1", "test:u1", { action: question!.buttons![1]!.id })
    const sent = await harness.channel.waitForSent(1)
    expect(sent[0]!.text).toBe('got {"answer":"Blue","source":"user"}')
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("asks the user when a permission rule says ask, and runs the tool once allowed", async () => {
    const worker = recorded((req) => (afterTool(req) ? { text: `listed: ${req.lastToolResults[0]!.content}` } : { toolCalls: [{ name: "list_files", args: {} }] }))
    harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) ? { text: "" } : req.lastUserText.includes("<task-results>") ? say("done") : { toolCalls: [{ name: "delegate", args: { prompt: "list" } }] }),
        planner: (req) => (afterTool(req) ? { text: "ok" } : { toolCalls: [{ name: "delegate", args: { prompt: "list files" } }] }),
        worker: worker.script,
      }),
      { PERMISSIONS_FILE: permissionsFile({ worker: [{ permission: "list_files", pattern: "*", action: "ask" }] }) },
    )
    const { channel } = harness
    await channel.say("go")
    await channel.waitFor(() => channel.sent.some((m) => m.buttons), "the permission question")
    const question = channel.sent.find((m) => m.buttons)!
    expect(question.text).toMatch(/would like to use list_files/)
    await channel.press("Allow")
    await channel.waitFor(() => channel.sent.some((m) => m.text === "done"), "the report")
    expect(worker.requests.at(-1)!.lastToolResults[0]!.content).not.toMatch(/denied/i)
  })
})

function permissionsFile(rules: object): string {
  const path = `${process.env.TMPDIR ?? "/tmp"}/steward-perm-${process.pid}-${Math.random().toString(36).slice(2)}.json`
  writeFileSync(path, JSON.stringify(rules))
  return path
}
