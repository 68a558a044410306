import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import { CODE_LENGTH } from "../../src/access/access.ts"
import { expandTemplate } from "../../src/command/commands.ts"
import { byRole, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, recorded, say } from "../support/scripts.ts"

const execFileAsync = promisify(execFile)

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})



/** A stranger writes; returns the pairing code Steward answered with. */
async function strangerCode(h: Harness): Promise<string> {
  await h.channel.say("hi", "test:c9", "test:u9")
  await h.channel.waitFor(() => h.channel.sent.some((m) => m.conversation === "test:c9"), "the pairing code")
  return /: ([A-Z0-9]{8})$/.exec(h.channel.sent.find((m) => m.conversation === "test:c9")!.text)![1]!
}

const echo = (req: ChatRequest): Reply => (afterTool(req) ? { text: "" } : say(`you said: ${req.lastUserText}`))

describe("platform event ids", () => {
  it("takes an event delivered twice once, also after a restart", async () => {
    const teller = recorded(echo)
    harness = await startHarness(byRole({ teller: teller.script }))
    await harness.channel.say("hello", "test:c1", "test:u1", { eventId: "test:1" })
    await harness.channel.say("hello", "test:c1", "test:u1", { eventId: "test:1" })
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    await harness.restart()
    await harness.channel.say("hello", "test:c1", "test:u1", { eventId: "test:1" })
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(0)
    expect(teller.requests.filter((r) => !afterTool(r))).toHaveLength(1)
  })

  it("records an ordinary message and its event id in one write, so no crash can separate them", async () => {
    harness = await startHarness(byRole({ teller: echo }))
    const store = harness.app.store
    const saves: Array<Parameters<typeof store.save>[0]> = []
    const save = store.save.bind(store)
    store.save = (records) => (saves.push(records), save(records))
    await harness.channel.say("hello", "test:c1", "test:u1", { eventId: "test:one-write" })
    expect(saves.filter((records) => records.seen?.length)).toEqual([expect.objectContaining({ seen: ["test:one-write"], events: [expect.objectContaining({ kind: "user_message", text: "hello" })] })])
    await harness.channel.waitForSent(1)
  })

  it("drops a duplicate that races the first delivery", async () => {
    harness = await startHarness(byRole({ teller: echo }))
    await Promise.all([1, 2, 3].map(() => harness!.channel.say("hello", "test:c1", "test:u1", { eventId: "test:race" })))
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })
})

describe("access and pairing", () => {
  it("gives a stranger a pairing code once, calls no model and keeps nothing they wrote", async () => {
    const teller = recorded(echo)
    harness = await startHarness(byRole({ teller: teller.script }))
    await harness.channel.say("let me in", "test:c9", "test:u9")
    await harness.channel.say("please", "test:c9", "test:u9")
    await harness.app.supervisor.idle()
    expect(teller.requests).toHaveLength(0)
    expect(harness.channel.sent).toHaveLength(1)
    const code = /: ([A-Z0-9]{8})$/.exec(harness.channel.sent[0]!.text)?.[1]
    expect(code).toHaveLength(CODE_LENGTH)
    // The stranger's id, for an owner who would rather add them to ALLOWED_USERS.
    expect(harness.channel.sent[0]!.text).toContain("You are test:u9 to me.")
    expect(JSON.stringify(await harness.app.store.history.recent("test:c9", 50, 0))).not.toMatch(/let me in|please/)

    // Any owner (a user named in ALLOWED_USERS) may approve.
    await harness.channel.say(`/pairing approve ${code}`, "test:c2", "test:u2")
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "Approved test:u9."), "the approval")
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.conversation === "test:c9" && /approved/.test(m.text)), "the welcome")
    await harness.channel.say("hello now", "test:c9", "test:u9")
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "you said: hello now"), "the reply")
  })

  it("takes an approval made with the CLI while the server runs", async () => {
    harness = await startHarness(byRole({ teller: echo }))
    const code = await strangerCode(harness)
    const cli = (...args: string[]) => execFileAsync(process.execPath, ["dist/cli.js", ...args], { env: { PATH: process.env.PATH, DATA_DIR: harness!.dataDir }, timeout: 20_000 })
    expect((await cli("pairing", "list")).stdout).toContain(`${code}  test:u9`)
    expect((await cli("pairing", "approve", code)).stdout).toBe("approved test:u9\n")
    await expect(cli("pairing", "approve", code)).rejects.toMatchObject({ code: 1, stderr: `steward: no pairing code ${code}\n` })
    await harness.channel.say("hello now", "test:c9", "test:u9")
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "you said: hello now"), "the reply")
  })

  it("keeps an approval across a restart and refuses admin commands to approved users", async () => {
    harness = await startHarness(byRole({ teller: echo }))
    const code = await strangerCode(harness)
    await harness.channel.say(`/pairing approve ${code.toLowerCase()}`)
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "Approved test:u9."), "the approval")
    await harness.restart({ graceful: true })
    await harness.channel.say("/pairing list", "test:c9", "test:u9")
    await harness.channel.say("/pairing approve ABCDEFGH")
    await harness.channel.waitForSent(2)
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["Only the owner may do that.", "Could not approve: no pairing code ABCDEFGH."])
  })
})

describe("commands", () => {
  it("answers /help with every command the user may run, without a model call", async () => {
    harness = await startHarness(byRole({ teller: echo }))
    await harness.channel.say("/help")
    const [help] = await harness.channel.waitForSent(1)
    expect(help!.text).toMatch(/^Commands:\n\/help — List the commands\n\/tasks — /)
    for (const name of ["cancel", "new", "stop", "timezone", "memory", "recap", "research"]) expect(help!.text).toContain(`\n/${name} — `)
    expect(harness.server.requests).toHaveLength(0)
  })

  it("lists built-in and file commands for the channel's menu", async () => {
    harness = await startHarness(byRole({ teller: echo }))
    expect(harness.channel.commands.map((c) => c.name)).toEqual(["help", "tasks", "cancel", "new", "pairing", "pause", "resume", "stop", "timezone", "memory", "recap", "research"])
  })

  it("/tasks and /cancel act on this conversation's tasks without a model", async () => {
    let release!: () => void
    const hanging = new Promise<Reply>((resolve) => (release = () => resolve({ text: "late" })))
    harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) ? { text: "" } : req.lastUserText.includes("<task-results>") ? say(`report: ${/status="(\w+)"/.exec(req.lastUserText)?.[1]}`) : { toolCalls: [{ name: "delegate", args: { prompt: "slow job" } }] }),
        planner: () => hanging,
      }),
    )
    const { channel } = harness
    await channel.say("do the slow job")
    await harness.server.waitForRequests(2)
    await channel.say("/tasks")
    await channel.waitForSent(1)
    const id = /• (\S+) — running, planner: slow job/.exec(channel.sent[0]!.text)?.[1]
    expect(id).toBeDefined()
    await channel.say("/cancel nope")
    await channel.say(`/cancel ${id}`)
    await channel.waitFor(() => channel.sent.some((m) => m.text === "report: cancelled"), "the cancelled report")
    expect(channel.sent.map((m) => m.text).slice(1, 3)).toEqual(["No queued or running task or schedule nope in this conversation.", `Cancelled ${id}.`])
    release()
  })

  it("/new starts a fresh Teller session: the old messages are no longer sent", async () => {
    const teller = recorded(echo)
    harness = await startHarness(byRole({ teller: teller.script }))
    await harness.channel.say("my secret word is tangerine")
    await harness.channel.waitForSent(1)
    await harness.channel.say("/new")
    await harness.channel.say("what was it?")
    await harness.channel.waitForSent(3)
    expect(harness.channel.sent[1]!.text).toMatch(/fresh conversation/)
    expect(JSON.stringify(teller.requests.at(-1)!.messages)).not.toContain("tangerine")
  })

  it("/research runs the researcher directly and wakes the Teller with its result and the seed's instruction", async () => {
    const teller = recorded((req) => (afterTool(req) ? { text: "" } : say("summary sent")))
    const worker = recorded(() => ({ text: "tides are caused by the moon" }))
    harness = await startHarness(byRole({ teller: teller.script, worker: worker.script }))
    await harness.channel.say("/research why tides")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(worker.requests[0]!.roleDetail).toBe("researcher")
    expect(worker.requests[0]!.lastUserText).toBe("Research the following and answer concisely, citing the URLs you used:\n\nwhy tides")
    expect(teller.requests).toHaveLength(1) // no Teller call before the result, none after its reply
    expect(teller.requests[0]!.lastUserText).toContain("tides are caused by the moon")
    expect(teller.requests[0]!.lastUserText).toMatch(/ran \/research\.\) Summarize the task tool output above and continue with your task\.$/)
  })

  it("@worker-type hands the text to that worker type; /recap gives the Teller its template", async () => {
    const teller = recorded((req) => (afterTool(req) ? { text: "" } : say("ok")))
    const worker = recorded(() => ({ text: "found" }))
    harness = await startHarness(byRole({ teller: teller.script, worker: worker.script }))
    await harness.channel.say("@researcher compare two kettles")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(worker.requests[0]).toMatchObject({ roleDetail: "researcher", lastUserText: "compare two kettles" })
    await harness.channel.say("/recap briefly")
    await harness.channel.waitForSent(2)
    await harness.app.supervisor.idle()
    expect(teller.requests.at(-1)!.lastUserText).toMatch(/^Give me a short recap .* briefly$/)
    // Unknown commands and unknown @names are ordinary messages.
    await harness.channel.say("/nosuch thing")
    await harness.channel.waitForSent(3)
    await harness.app.supervisor.idle()
    expect(teller.requests.at(-1)!.lastUserText).toBe("/nosuch thing")
  })
})

describe("expandTemplate", () => {
  it("fills $1…$N, gives the last placeholder the rest, and $ARGUMENTS everything", () => {
    expect(expandTemplate("Compare $1 with $2", "a b c", ["a", "b", "c"])).toBe("Compare a with b c")
    expect(expandTemplate("Do: $ARGUMENTS.", 'x "y z"', ["x", "y z"])).toBe('Do: x "y z".')
    expect(expandTemplate("Summarise", "this page", ["this", "page"])).toBe("Summarise\n\nthis page")
    expect(expandTemplate("Check $1 now", "", [])).toBe("Check  now")
  })
})
