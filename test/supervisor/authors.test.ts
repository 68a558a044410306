import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { byRole, contentText, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, envText, say } from "../support/scripts.ts"

/** Two people in one conversation (a channel thread, a group): A = test:u1, B = test:u2. */
const A = "test:u1"
const B = "test:u2"
const THREAD = "test:T1:C1:1700000000.000100"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  let entered!: () => void
  const reached = new Promise<void>((resolve) => (entered = resolve))
  return { opened, open, reached, entered }
}

/** The user messages of a request, as the model reads them. */
const userTexts = (req: ChatRequest) => req.messages.filter((m) => m.role === "user").map((m) => contentText(m.content))

/** Which author the newest input of a request was handed in for (the environment block). */
const actingFor = (req: ChatRequest) => /User: (\S+)/.exec(envText(req as never))?.[1]

describe("a turn acts for the author of its messages (shared conversations)", () => {
  it("hands B's message, sent while A's turn runs, to a turn of B's own: B's memory, B's notes, B's identity", async () => {
    const held = gate()
    const seen: ChatRequest[] = []
    const teller = async (req: ChatRequest): Promise<Reply> => {
      seen.push(req)
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("A: plan my trip")) {
        held.entered()
        await held.opened
        return { toolCalls: [{ name: "remember", args: { content: "A's trip" } }] }
      }
      if (req.lastUserText.includes("B: remember")) return { toolCalls: [{ name: "remember", args: { content: "B's seat" } }] }
      return say("ok")
    }
    harness = await startHarness(byRole({ teller }))
    for (const [user, secret] of [[A, "A-PRIVATE-MEMORY"], [B, "B-PRIVATE-MEMORY"]] as const) {
      mkdirSync(harness.memory.folder(user), { recursive: true })
      writeFileSync(join(harness.memory.folder(user), "memory.md"), secret)
    }
    await harness.channel.say("A: plan my trip", THREAD, A)
    await held.reached
    await harness.channel.say("B: remember my seat is 12C", THREAD, B)
    held.open()
    await harness.app.supervisor.idle()

    expect(harness.memory.notes).toEqual([
      { user: A, content: "A's trip" },
      { user: B, content: "B's seat" },
    ])
    // No request made for A carries B's words, and B's are answered with B's memory alone.
    for (const req of seen.filter((r) => r.system.includes("A-PRIVATE-MEMORY"))) expect(userTexts(req).join("\n")).not.toContain("B: remember")
    const forB = seen.filter((r) => r.lastUserText.includes("B: remember"))
    expect(forB.length).toBeGreaterThan(0)
    for (const req of forB) {
      expect(req.system).toContain("B-PRIVATE-MEMORY")
      expect(req.system).not.toContain("A-PRIVATE-MEMORY")
      expect(actingFor(req)).toBe(B)
    }
  })

  it("continues an ask_user question as the asker although someone else wrote meanwhile", async () => {
    const seen: ChatRequest[] = []
    const teller = (req: ChatRequest): Reply => {
      seen.push(req)
      const answer = req.lastToolResults.find((result) => result.toolName === "ask_user")
      if (answer) return { toolCalls: [{ name: "remember", args: { content: `colour ${answer.content}` } }] }
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("paint")) return { toolCalls: [{ name: "ask_user", args: { question: "Which colour?", options: ["Red", "Blue"], timeout: 3600 } }] }
      return { toolCalls: [{ name: "remember", args: { content: req.lastUserText } }] }
    }
    harness = await startHarness(byRole({ teller }))
    await harness.channel.say("paint the fence", THREAD, A)
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text.startsWith("Which colour?")), "the question")
    await harness.app.supervisor.idle()
    // B writes while the question waits: B's text is no answer (it is not B's question).
    await harness.channel.say("B here: note my badge 42", THREAD, B)
    expect(await harness.channel.press("Blue", THREAD, B)).toEqual({ notice: expect.stringContaining("someone else") })
    await harness.channel.press("Blue", THREAD, A)
    await harness.app.supervisor.idle()

    expect(harness.memory.notes).toEqual([
      { user: A, content: 'colour {"answer":"Blue","source":"user"}' },
      { user: B, content: "B here: note my badge 42" },
    ])
    // The turn that got the answer took none of B's words.
    const resumed = seen.find((req) => req.lastToolResults.some((result) => result.toolName === "ask_user"))!
    expect(userTexts(resumed).join("\n")).not.toContain("badge 42")
  })

  it("/stop and /new from one user leave another user's turn alone; the owner's /stop reaches it", async () => {
    const held = gate()
    const teller = async (req: ChatRequest): Promise<Reply> => {
      if (afterTool(req)) return { text: "" }
      if (req.lastUserText.includes("long job")) {
        held.entered()
        await held.opened
        return say("A's long job done")
      }
      return say("ok")
    }
    harness = await startHarness(byRole({ teller }))
    // B is the only owner; A and C are users anyone may be.
    const C = "test:u3"
    harness.config.allowedUsers.users.delete(A)
    harness.config.allowedUsers.anyone = true
    await harness.channel.say("long job", THREAD, A)
    await held.reached
    await harness.channel.say("/stop", THREAD, C)
    await harness.channel.say("/new", THREAD, C)
    const [stopAnswer, newAnswer] = (await harness.channel.waitForSent(2, THREAD)).map((m) => m.text)
    expect(stopAnswer).toBe("Nothing is running here.")
    expect(newAnswer).toBe("A request of test:u1 is still being handled here; /new would cut it short. Try again once it is done.")
    await harness.channel.say("/stop", THREAD, B)
    const sent = await harness.channel.waitForSent(3, THREAD)
    expect(sent[2]!.text).toMatch(/^Stopped the reply I was writing/)
    held.open()
    await harness.app.supervisor.idle()
    expect(harness.channel.sent.map((m) => m.text)).not.toContain("A's long job done")
  })
})

describe("a shared conversation's history, as another person's turn sees it", () => {
  it("shows B what was said in the chat, never what A's tools and tasks read for A", async () => {
    const seen: ChatRequest[] = []
    const teller = (req: ChatRequest): Reply => {
      seen.push(req)
      if (afterTool(req)) return req.lastToolResults.some((r) => r.toolName === "remember") ? say("Noted.") : { text: "" }
      if (req.lastUserText.startsWith("<task-results>")) return say("Your summary is ready.")
      if (req.lastUserText.includes("A: keep my pin")) return { toolCalls: [{ name: "remember", args: { content: "A-PIN-4711" } }] }
      if (req.lastUserText.includes("A: summarise my files")) return { toolCalls: [{ name: "delegate", args: { prompt: "summarise the files" } }] }
      return say("ok")
    }
    const planner = (req: ChatRequest): Reply => (afterTool(req) ? { text: "Dispatched." } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] })
    harness = await startHarness(byRole({ teller, planner, worker: () => ({ text: "A-REPORT-SECRET" }) }))
    await harness.channel.say("A: keep my pin", THREAD, A)
    await harness.app.supervisor.idle()
    await harness.channel.say("A: summarise my files", THREAD, A)
    await harness.app.supervisor.idle()
    await harness.channel.say("B: what did A store?", THREAD, B)
    await harness.app.supervisor.idle()
    await harness.channel.say("A: thanks", THREAD, A)
    await harness.app.supervisor.idle()

    const forB = JSON.stringify(seen.filter((req) => actingFor(req) === B).map((req) => req.messages))
    expect(forB).toContain("A: keep my pin")
    expect(forB).toContain("Noted.")
    expect(forB).toContain("Your summary is ready.")
    expect(forB).not.toContain("A-PIN-4711")
    expect(forB).not.toContain("A-REPORT-SECRET")
    // A's own later turn still has all of it.
    const forA = JSON.stringify(seen.find((req) => req.lastUserText.includes("A: thanks"))!.messages)
    expect(forA).toContain("A-PIN-4711")
    expect(forA).toContain("A-REPORT-SECRET")
    expect(forA).toContain("B: what did A store?")
  })
})

describe("another person's work in a shared conversation", () => {
  it("B's Planner can neither redefine A's schedule, nor continue A's Worker session, nor list A's tasks", async () => {
    const plannerSaw: ChatRequest[] = []
    const teller = (req: ChatRequest): Reply => (afterTool(req) ? { text: "" } : req.lastUserText.startsWith("<task-results>") ? say("done") : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] })
    let aSession = ""
    let aSchedule = ""
    const planner = (req: ChatRequest): Reply => {
      plannerSaw.push(req)
      if (afterTool(req)) return { text: "Dispatched." }
      const text = req.lastUserText
      if (text.includes("A: schedule")) return { toolCalls: [{ name: "schedule", args: { prompt: "A's digest", type: "recurring", interval: 3600 } }] }
      if (text.includes("A: work")) return { toolCalls: [{ name: "delegate", args: { prompt: "read A's files" } }] }
      if (text.includes("B: take over")) {
        return {
          toolCalls: [
            { name: "schedule", args: { triggerId: aSchedule, prompt: "send me A's files", type: "recurring", interval: 3600 } },
            { name: "delegate", args: { prompt: "go on", session_id: aSession } },
            { name: "list_tasks", args: { scope: "all" } },
            { name: "list_tasks", args: { scope: "finished" } },
          ],
        }
      }
      return { text: "?" }
    }
    harness = await startHarness(byRole({ teller, planner, worker: () => ({ text: "A-WORKER-READ" }) }))
    // B is not an owner: anyone may talk to Steward, A and the test owner are named.
    harness.config.allowedUsers.users.delete(B)
    harness.config.allowedUsers.anyone = true
    await harness.channel.say("A: schedule", THREAD, A)
    await harness.app.supervisor.idle()
    await harness.channel.say("A: work", THREAD, A)
    await harness.app.supervisor.idle()
    const tasks = await harness.app.store.tasks()
    aSession = tasks.find((task) => task.role === "worker" && task.user === A)!.sessionId
    aSchedule = (await harness.app.store.schedules.triggers())[0]!.id
    await harness.channel.say("B: take over", THREAD, B)
    await harness.app.supervisor.idle()

    expect((await harness.app.store.schedules.trigger(aSchedule))!.prompt).toBe("A's digest")
    const bWorker = (await harness.app.store.tasks()).find((task) => task.role === "worker" && task.user === B)!
    expect(bWorker.sessionId).not.toBe(aSession)
    expect(bWorker.continuesSession).toBeUndefined()
    const results = plannerSaw.find((req) => req.lastToolResults.some((r) => r.toolName === "list_tasks"))!.lastToolResults
    expect(results.find((r) => r.toolName === "schedule")!.content).toMatch(/triggerId/)
    for (const listing of results.filter((r) => r.toolName === "list_tasks")) {
      expect(listing.content).not.toContain(aSchedule)
      expect(listing.content).not.toContain("read A's files")
    }
  })
})
