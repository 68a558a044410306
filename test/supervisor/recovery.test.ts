import { afterEach, describe, expect, it } from "vitest"
import { byRole } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, recorded, say } from "../support/scripts.ts"
import { delegatingTeller, dispatching, echoTeller, hangsFirst } from "./scripted-agents.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

describe("Supervisor", () => {
  it("reports a task whose model keeps failing, instead of ending silently", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: dispatching("job"),
        worker: () => ({ error: { status: 503, message: "overloaded", retryAfterMs: 1 } }),
      }),
    )
    await harness.channel.say("go")
    const sent = await harness.channel.waitForSent(2)
    expect(sent[1]!.text).toBe('results: status="completed" status="failed"')
    // MODEL_MAX_RETRIES=2 → three attempts
    expect(harness.server.requests.filter((r) => r.role === "worker")).toHaveLength(3)
  })

  it("sends the task results themselves when the Teller's turn on them fails", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => (req.lastUserText.includes("<task-results>") ? { error: { status: 400, message: "the teller broke" } } : delegatingTeller(req)),
        planner: dispatching("count the cats"),
        worker: () => ({ text: "There are 3 cats." }),
      }),
    )
    await harness.channel.say("go")
    const sent = await harness.channel.waitForSent(3)
    expect(sent[1]!.text).toMatch(/^Sorry — I could not answer that/)
    const report = sent[2]!.text
    expect(report).toMatch(/^Results of your tasks:\n\n\*Task \S+\* \(planner\): completed\n/)
    expect(report).toMatch(/\nok\n\n\*Task \S+\* \(default\): completed\nPrompt: count the cats\nThere are 3 cats\.$/)
    expect(report).not.toMatch(/<\/?task|session_id/)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(3)
  })

  it("does not send the results again when the Teller relayed them before its turn failed", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (!req.lastUserText.includes("<task-results>")) return delegatingTeller(req)
          // list_tasks beside the reply keeps the turn going, to the call that fails.
          if (afterTool(req)) return { error: { status: 400, message: "the teller broke after replying" } }
          return { toolCalls: [{ name: "reply", args: { text: "relayed: 3 cats" } }, { name: "list_tasks", args: {} }] }
        },
        planner: dispatching("count the cats"),
        worker: () => ({ text: "There are 3 cats." }),
      }),
    )
    await harness.channel.say("go")
    await harness.channel.waitForSent(3)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["you said: go", "relayed: 3 cats", expect.stringMatching(/^Sorry — I could not answer that/)])
  })

  it("gives up on a message whose turn was interrupted by a crash three times, with an apology", async () => {
    const teller = recorded(() => ({ hang: true }))
    harness = await startHarness(byRole({ teller: teller.script }))
    await harness.channel.say("hello")
    for (let crash = 1; crash <= 3; crash++) {
      await harness.server.waitForRequests(crash)
      await harness.restart()
    }
    const [sent] = await harness.channel.waitForSent(1)
    expect(sent!.text).toBe("Sorry — I kept failing while handling your last message, so I stopped. Please send it again.")
    await harness.app.supervisor.idle()
    expect(teller.requests).toHaveLength(3)
    expect(await harness.app.store.events()).toEqual([])
  })

  it("sends the results themselves when it gives up on a turn that keeps crashing on them", async () => {
    const teller = recorded(echoTeller)
    harness = await startHarness(byRole({ teller: teller.script }))
    const report = '<task-results>\n<task id="T1" agent="default" status="completed">\nPrompt: count the cats\nThere are 3 cats.\n<task_metadata>\nsession_id: S1\n</task_metadata>\n</task>\n</task-results>'
    // Three turns on it were interrupted by crashes; the next start gives up on it.
    const event = { id: "01KCRASHED0000000000000000", conversation: "test:c1", user: "test:u1", kind: "task_results" as const, text: report, createdAt: new Date().toISOString(), attempts: 3 }
    await harness.app.store.save({ events: [event] })
    await harness.restart()
    const [sent] = await harness.channel.waitForSent(1)
    expect(sent!.text).toBe("Results of your tasks:\n\n*Task T1* (default): completed\nPrompt: count the cats\nThere are 3 cats.")
    await harness.app.supervisor.idle()
    expect(teller.requests).toHaveLength(0)
    expect(await harness.app.store.events()).toEqual([])
  })

  it("abandons a model request that hangs past MODEL_TIMEOUT and retries it, so the turn still answers", async () => {
    const teller = hangsFirst(say("answered on the retry"))
    harness = await startHarness(byRole({ teller: (req) => (req.messages.at(-1)?.role === "tool" ? { text: "" } : teller.script()) }), { MODEL_TIMEOUT: "1" })
    const started = Date.now()
    await harness.channel.say("hello")
    const [reply] = await harness.channel.waitForSent(1, undefined, 8000)
    expect(reply!.text).toBe("answered on the retry")
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    expect(harness.server.requests.filter((r) => r.role === "teller").length).toBeGreaterThanOrEqual(2)
  })

  it("re-queues a task interrupted by a restart once, and reports the batch exactly once", async () => {
    const worker = hangsFirst({ text: "finished after restart" })
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: dispatching("job"), worker: worker.script }))
    await harness.channel.say("go")
    await worker.started
    await harness.restart()
    const sent = await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(sent[0]!.text).toBe('results: status="completed" status="completed"')
    expect(harness.channel.sent).toHaveLength(1)
    const task = (await harness.app.store.tasks()).find((t) => t.role === "worker")!
    expect(task).toMatchObject({ status: "completed", attempts: 2, result: "finished after restart" })
  })

  it("puts a task back in the queue on a graceful stop without counting it as a crash", async () => {
    const worker = hangsFirst({ text: "done" })
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: dispatching("job"), worker: worker.script }))
    await harness.channel.say("go")
    await worker.started
    await harness.restart({ graceful: true })
    await harness.channel.waitForSent(1)
    const task = (await harness.app.store.tasks()).find((t) => t.role === "worker")!
    expect(task).toMatchObject({ status: "completed", attempts: 1 })
  })

  it("fails a task that was interrupted twice", async () => {
    const worker = hangsFirst()
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: dispatching("job"), worker: worker.script }))
    await harness.channel.say("go")
    await worker.started
    await harness.restart()
    await harness.server.waitForRequests(harness.server.requests.length + 1)
    await harness.restart()
    const sent = await harness.channel.waitForSent(1)
    expect(sent[0]!.text).toBe('results: status="completed" status="failed"')
    const task = (await harness.app.store.tasks()).find((t) => t.role === "worker")!
    expect(task.error).toMatch(/interrupted 2 times/)
  })
})
