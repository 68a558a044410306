import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { byRole, contentText, sequence, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { recorded } from "../support/scripts.ts"
import { waitFor } from "../support/wait-for.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** The request answers tool results (rather than a new message). */
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
const say = (text: string): Reply => ({ toolCalls: [{ name: "reply", args: { text } }] })
const done: Reply = { text: "" }

/** A Teller that replies once to each user message and once to each batch of task results. */
function echoTeller(req: ChatRequest): Reply {
  if (afterTool(req)) return done
  if (req.lastUserText.includes("<task-results>")) return say(`results: ${req.lastUserText.match(/status="\w+"/g)?.join(" ")}`)
  return say(`you said: ${req.lastUserText}`)
}

/** Like echoTeller, but every user message is also delegated to the Planner. */
function delegatingTeller(req: ChatRequest): Reply {
  if (afterTool(req) || req.lastUserText.includes("<task-results>")) return echoTeller(req)
  return { toolCalls: [{ name: "reply", args: { text: `you said: ${req.lastUserText}` } }, { name: "delegate", args: { prompt: req.lastUserText } }] }
}

/** A Planner that dispatches one worker task per prompt, saying "ok" as it does: a step that
 *  only stages workers ends its run. */
const dispatching =
  (...prompts: string[]) =>
  (req: ChatRequest): Reply =>
    afterTool(req) ? { text: "ok" } : { text: "ok", toolCalls: prompts.map((prompt) => ({ name: "delegate", args: { prompt } })) }

/** A worker whose first call hangs until aborted and whose later calls answer `then`. */
function hangsFirst(then: Reply = { hang: true }) {
  const started = deferred()
  let calls = 0
  const script = (): Reply => {
    if (++calls > 1) return then
    started.resolve()
    return { hang: true }
  }
  return { started: started.promise, script }
}

function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe("Supervisor", () => {
  it("answers a Teller-only turn once, through the reply tool", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    await harness.channel.say("hello")
    const sent = await harness.channel.waitForSent(1)
    expect(sent[0]!.text).toBe("you said: hello")
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("does not count the same reply in three different turns as a doom loop", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    for (let i = 1; i <= 3; i++) {
      await harness.channel.say("hi")
      await harness.channel.waitForSent(i)
      await harness.app.supervisor.idle()
    }
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["you said: hi", "you said: hi", "you said: hi"])
  })

  it("delivers a turn's final text when the Teller did not call reply", async () => {
    harness = await startHarness(byRole({ teller: () => ({ text: "plain answer" }) }))
    await harness.channel.say("hi")
    expect((await harness.channel.waitForSent(1))[0]!.text).toBe("plain answer")
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("never lets a stranger's message reach a model or the store", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    await harness.channel.say("let me in", "test:c9", "test:u9")
    await harness.app.supervisor.idle()
    expect(harness.server.requests).toHaveLength(0)
    expect(await harness.app.store.recent("test:c9", 10, 0)).toEqual([])
  })

  it("runs a full delegate round trip and wakes the Teller once with every result", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: (req) =>
          !afterTool(req)
            ? { toolCalls: [{ name: "delegate", args: { prompt: "part A" } }, { name: "delegate", args: { prompt: "part B", priority: 9 } }] }
            : { text: "dispatched two workers" },
        worker: (req) => ({ text: `done with ${req.lastUserText}` }),
      }),
    )
    await harness.channel.say("do the thing")
    const sent = await harness.channel.waitForSent(2)
    await harness.app.supervisor.idle()
    expect(sent.map((m) => m.text)).toEqual(["you said: do the thing", 'results: status="completed" status="completed" status="completed"'])
    const report = harness.server.requests.find((r) => r.role === "teller" && contentText(r.body.messages.at(-1)!.content).startsWith("<task-results>"))!
    const text = contentText(report.body.messages.at(-1)!.content)
    expect(text).toContain("done with part A")
    expect(text).toContain("done with part B")
    expect(text).toContain("session_id:")
    expect(harness.channel.sent).toHaveLength(2)
  })

  it("takes one conversation's messages in order and injects one that arrives mid-turn", async () => {
    const release = deferred()
    let tellerCalls = 0
    harness = await startHarness(
      byRole({
        teller: async (req) => {
          tellerCalls++
          if (tellerCalls === 1) {
            await release.promise
            return { toolCalls: [{ name: "list_tasks", args: {} }] }
          }
          if (req.lastToolResults.some((r) => r.toolName === "reply")) return done
          return say(`seen: ${req.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content)).join(" | ")}`)
        },
      }),
    )
    await harness.channel.say("first")
    await harness.server.waitForRequests(1)
    await harness.channel.say("second")
    release.resolve()
    const [reply] = await harness.channel.waitForSent(1)
    expect(reply!.text).toMatch(/first.*<system-reminder>.*second/)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("runs different conversations concurrently", async () => {
    const release = deferred()
    harness = await startHarness(
      byRole({
        teller: async (req) => {
          if (afterTool(req)) return done
          if (req.lastUserText === "slow") await release.promise
          return say(req.lastUserText)
        },
      }),
    )
    await harness.channel.say("slow", "test:c1")
    await harness.server.waitForRequests(1)
    await harness.channel.say("fast", "test:c2", "test:u2")
    expect((await harness.channel.waitForSent(1))[0]!.text).toBe("fast")
    release.resolve()
    await harness.channel.waitForSent(2)
  })

  it("runs worker tasks by priority, first-in first-out within a priority, within the concurrency limit", async () => {
    const order: string[] = []
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: (req) =>
          !afterTool(req)
            ? {
                toolCalls: [
                  { name: "delegate", args: { prompt: "low", priority: 1 } },
                  { name: "delegate", args: { prompt: "high-1", priority: 9 } },
                  { name: "delegate", args: { prompt: "mid", priority: 5 } },
                  { name: "delegate", args: { prompt: "high-2", priority: 9 } },
                ],
              }
            : { text: "ok" },
        worker: (req) => {
          order.push(req.lastUserText)
          return { text: "ok" }
        },
      }),
      { WORKER_CONCURRENCY: "1" },
    )
    await harness.channel.say("go")
    await harness.channel.waitForSent(2)
    expect(order).toEqual(["high-1", "high-2", "mid", "low"])
  })

  it("runs as many worker tasks at once as WORKER_CONCURRENCY allows, and never more", async () => {
    let running = 0
    let most = 0
    const started: Array<() => void> = []
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: dispatching("a", "b", "c", "d", "e"),
        worker: async () => {
          most = Math.max(most, ++running)
          await new Promise<void>((resolve) => started.push(resolve))
          running--
          return { text: "ok" }
        },
      }),
      { WORKER_CONCURRENCY: "3" },
    )
    await harness.channel.say("go")
    await waitFor(() => started.length === 3)
    expect(running).toBe(3)
    // As each ends, the next starts, never more than three at once.
    while (started.length > 0) started.shift()!()
    await waitFor(() => started.length === 2)
    while (started.length > 0) started.shift()!()
    await harness.channel.waitForSent(2)
    expect(most).toBe(3)
  })

  it("gives a task with timeout null its role's default timeout", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: (req) => (!afterTool(req) ? { toolCalls: [{ name: "delegate", args: { prompt: "slow job", timeout: null } }] } : { text: "ok" }),
        worker: () => ({ hang: true }),
      }),
      { WORKER_TIMEOUT: "1" },
    )
    await harness.channel.say("go")
    const sent = await harness.channel.waitForSent(2)
    expect(sent[1]!.text).toBe('results: status="completed" status="timed_out"')
    const worker = (await harness.app.store.tasks()).find((t) => t.role === "worker")!
    expect(worker.error).toMatch(/timed out after 1 s/)
  })

  it("commits a Planner's worker tasks only when it succeeds: all or none", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: sequence({ toolCalls: [{ name: "delegate", args: { prompt: "never runs" } }] }, { error: { status: 400, message: "the planner broke" } }),
        worker: () => {
          throw new Error("no worker may run")
        },
      }),
    )
    await harness.channel.say("plan it")
    const sent = await harness.channel.waitForSent(2)
    expect(sent[1]!.text).toBe('results: status="failed"')
    expect(harness.server.requests.some((r) => r.role === "worker")).toBe(false)
    const tasks = await harness.app.store.tasks()
    expect(tasks.map((t) => [t.role, t.status])).toEqual([["planner", "failed"]])
  })

  it("aborts a task that runs past its timeout and reports it as timed_out", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: (req) => (!afterTool(req) ? { toolCalls: [{ name: "delegate", args: { prompt: "slow job", timeout: 1 } }] } : { text: "ok" }),
        worker: () => ({ hang: true }),
      }),
    )
    await harness.channel.say("go")
    const sent = await harness.channel.waitForSent(2)
    expect(sent[1]!.text).toBe('results: status="completed" status="timed_out"')
    const worker = (await harness.app.store.tasks()).find((t) => t.role === "worker")!
    expect(worker.error).toMatch(/timed out after 1 s/)
  })

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

  it("gives a malformed tool call's error to the model and carries on", async () => {
    harness = await startHarness(
      byRole({
        teller: sequence({ toolCalls: [{ name: "reply", args: '{"text": "unterminated' }] }, (req) => say(`recovered after: ${req.lastToolResults[0]?.content.slice(0, 40)}`), done),
      }),
    )
    await harness.channel.say("hi")
    const sent = await harness.channel.waitForSent(1)
    expect(sent[0]!.text).toMatch(/^recovered after: Invalid input for tool reply/)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent).toHaveLength(1)
  })

  it("refuses planner-only delegate fields from the Teller with an error the model sees", async () => {
    harness = await startHarness(
      byRole({
        teller: sequence({ toolCalls: [{ name: "delegate", args: { prompt: "x", priority: 9 } }] }, (req) => say(req.lastToolResults[0]!.content), done),
      }),
    )
    await harness.channel.say("hi")
    expect((await harness.channel.waitForSent(1))[0]!.text).toContain("Only the Planner may set priority")
    expect(await harness.app.store.tasks()).toEqual([])
  })

  it("retries a failed send with backoff and delivers it exactly once", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    harness.channel.failures = 1
    await harness.channel.say("hello")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(harness.channel.sent.map((m) => m.text)).toEqual(["you said: hello"])
    const [record] = await harness.app.store.outbox()
    expect(record).toMatchObject({ status: "delivered", attempts: 2, messageId: "m1" })
  })

  it("lists and cancels only queued tasks of the caller's conversation", async () => {
    const hold = deferred()
    let listed = ""
    harness = await startHarness(
      byRole({
        teller: async (req) => {
          if (req.lastUserText === "status" && !afterTool(req)) return { toolCalls: [{ name: "list_tasks", args: {} }] }
          if (afterTool(req)) {
            if (req.lastToolResults[0]!.toolName === "list_tasks") {
              listed = req.lastToolResults[0]!.content
              const idOf = (status: string) => JSON.parse(listed).tasks.find((t: { status: string }) => t.status === status).id
              // The seed's cancel_task stops queued tasks only: a running one is left alone.
              return { toolCalls: ["queued", "running"].map((status) => ({ name: "cancel_task", args: { taskId: idOf(status) } })).concat({ name: "cancel_task", args: { taskId: "nope" } }) }
            }
            return done
          }
          return echoTeller(req)
        },
        planner: async (req) => {
          if (afterTool(req)) return { text: "ok" }
          if (req.lastUserText === "first") await hold.promise
          return { text: "ok" }
        },
      }),
      { WORKER_CONCURRENCY: "1" },
    )
    // Two planner tasks, one running (held) and one queued behind it.
    await harness.app.supervisor.tasks.delegate(ctxFor(harness, "call-1"), { prompt: "first", type: "oneshot", priority: 5, timeout: null })
    await harness.app.supervisor.tasks.delegate(ctxFor(harness, "call-2"), { prompt: "second", type: "oneshot", priority: 5, timeout: null })
    await harness.server.waitForRequests(1)
    await harness.channel.say("status")
    await harness.channel.waitForSent(1)
    expect(JSON.parse(listed).tasks.map((t: { prompt: string; status: string }) => [t.prompt, t.status])).toEqual([
      ["first", "running"],
      ["second", "queued"],
    ])
    const cancelResults = harness.server.requests.at(-1)!.body.messages.filter((m) => m.role === "tool" && String(m.content).includes("success")).map((m) => m.content)
    expect(cancelResults).toEqual(['{"success":true}', '{"success":false}', '{"success":false}'])
    // The cancelled task is reported like any other ending.
    expect(harness.channel.sent.map((m) => m.text)).toContain('results: status="cancelled"')
    hold.resolve()
    await harness.app.supervisor.idle()
    const statuses = (await harness.app.store.tasks()).map((t) => [t.prompt, t.status])
    expect(statuses).toEqual([
      ["first", "completed"],
      ["second", "cancelled"],
    ])
  })

  it("never lets a Worker delegate, even when a permissions file allows it everything", async () => {
    const permissions = join(mkdtempSync(join(tmpdir(), "steward-perm-")), "permissions.json")
    writeFileSync(permissions, JSON.stringify({ worker: [{ permission: "*", pattern: "*", action: "allow" }] }))
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: dispatching("job"),
        worker: (req) => (afterTool(req) ? { text: "did it myself" } : { toolCalls: [{ name: "delegate", args: { prompt: "nested" } }] }),
      }),
      { PERMISSIONS_FILE: permissions },
    )
    await harness.channel.say("go")
    await harness.channel.waitForSent(2)
    const offered = (harness.server.requests.find((r) => r.role === "worker")!.body.tools ?? []).map((t) => t.function?.name)
    expect(offered).toContain("write_file")
    expect(offered).not.toContain("delegate")
    expect((await harness.app.store.tasks()).map((t) => t.prompt)).toEqual(["go", "job"])
    const asWorker = { ...ctxFor(harness, "w-call"), role: "worker" as const, agent: "default" }
    await expect(harness.app.supervisor.tasks.delegate(asWorker, { prompt: "nested", type: "oneshot", priority: 5, timeout: null })).rejects.toThrow(/Workers cannot delegate/)
  })

  it("starts a fresh session when session_id names one an unfinished task is still using", async () => {
    const hold = deferred()
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: async () => (await hold.promise, { text: "ok" }) }), { WORKER_CONCURRENCY: "1" })
    const { taskId } = await harness.app.supervisor.tasks.delegate(ctxFor(harness, "call-1"), { prompt: "first", type: "oneshot", priority: 5, timeout: null })
    const busySession = (await harness.app.store.tasks()).find((t) => t.id === taskId)!.sessionId
    const second = await harness.app.supervisor.tasks.delegate(ctxFor(harness, "call-2"), { prompt: "second", type: "oneshot", priority: 5, timeout: null, sessionId: busySession })
    const tasks = await harness.app.store.tasks()
    expect(tasks.find((t) => t.id === second.taskId)!.sessionId).not.toBe(busySession)
    hold.resolve()
    await harness.app.supervisor.idle()
    // Once that task has ended, the same id continues the session.
    const third = await harness.app.supervisor.tasks.delegate(ctxFor(harness, "call-3"), { prompt: "third", type: "oneshot", priority: 5, timeout: null, sessionId: busySession })
    expect((await harness.app.store.tasks()).find((t) => t.id === third.taskId)!.sessionId).toBe(busySession)
    hold.resolve()
    await harness.app.supervisor.idle()
  })

  it("tells each channel at start which of its conversations Steward already takes part in", async () => {
    harness = await startHarness(byRole({ teller: echoTeller }))
    await harness.channel.say("hello", "test:c1")
    await harness.channel.say("hello", "test:T1:C1:1700000000.000100", "test:u2")
    await harness.channel.waitForSent(2)
    await harness.restart({ graceful: true })
    expect(harness.channel.conversations.sort()).toEqual(["test:T1:C1:1700000000.000100", "test:c1"])
  })

  it("acts for the author of the message in a conversation several people write in", async () => {
    harness = await startHarness(
      byRole({ teller: (req) => (afterTool(req) ? done : req.lastUserText.startsWith("remember") ? { toolCalls: [{ name: "remember", args: { content: req.lastUserText } }] } : say("hi")) }),
    )
    await harness.channel.say("hello", "test:thread", "test:u1")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    await harness.channel.say("remember my seat is 12C", "test:thread", "test:u2")
    await harness.app.supervisor.idle()
    expect(harness.memory.notes).toEqual([{ user: "test:u2", content: "remember my seat is 12C" }])
  })

  it("returns the same task for a delegate call replayed with the same call id", async () => {
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: () => ({ text: "ok" }) }))
    const ctx = ctxFor(harness, "same-call")
    const first = await harness.app.supervisor.tasks.delegate(ctx, { prompt: "p", type: "oneshot", priority: 5, timeout: null })
    const second = await harness.app.supervisor.tasks.delegate(ctx, { prompt: "p", type: "oneshot", priority: 5, timeout: null })
    expect(second.taskId).toBe(first.taskId)
  })

  it("aborting a task aborts the tasks it committed", async () => {
    const worker = hangsFirst()
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: dispatching("a", "b"), worker: worker.script }), { WORKER_CONCURRENCY: "1" })
    await harness.channel.say("go")
    await worker.started
    const planner = (await harness.app.store.tasks()).find((t) => t.role === "planner")!
    // The Planner has ended; aborting it still reaches the running and the queued worker.
    expect(await harness.app.supervisor.tasks.abort(planner.id)).toBe(true)
    const sent = await harness.channel.waitForSent(2)
    expect(sent[1]!.text).toBe('results: status="completed" status="cancelled" status="cancelled"')
    expect(await harness.app.supervisor.tasks.abort(planner.id)).toBe(false)
  })

  it("compacts a Teller session that outgrew its context and writes the summary to the user's memory", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (!afterTool(req) && !req.lastUserText.startsWith("Continue")) return { toolCalls: [{ name: "list_tasks", args: {} }], usage: { prompt: 5000, completion: 10 } }
          if (req.messages.some((m) => m.role === "assistant" && contentText(m.content).startsWith("SUMMARY"))) return afterTool(req) ? done : say("after compaction")
          return done
        },
        compaction: () => ({ text: "SUMMARY: the user asked for their tasks" }),
      }),
      { MODEL_CONTEXT_TOKENS: "1000", MODEL_OUTPUT_TOKENS: "256" },
    )
    await harness.channel.say("what is running?")
    expect((await harness.channel.waitForSent(1))[0]!.text).toBe("after compaction")
    expect(harness.memory.compactions).toEqual([{ user: "test:u1", summary: "SUMMARY: the user asked for their tasks" }])
  })

  it("shows live progress of a task's tool calls", async () => {
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: dispatching("list"),
        worker: (req) => (!afterTool(req) ? { toolCalls: [{ name: "list_files", args: {} }] } : { text: "empty" }),
      }),
    )
    await harness.channel.say("go")
    await harness.channel.waitForSent(2)
    // One status for the batch: the Planner's task heads it, the Worker's tool calls show in it.
    expect(new Set(harness.channel.progressUpdates.map((p) => p.update.taskId)).size).toBe(1)
    const states = harness.channel.progressUpdates.map((p) => [p.update.agent, p.update.state, p.update.tools.filter((t) => t.tool === "list_files").map((t) => t.status).join(","), p.update.stop?.label])
    expect(states).toContainEqual(["planner", "running", "running", "Stop"])
    expect(states).toContainEqual(["planner", "running", "completed", "Stop"])
    expect(states.at(-1)).toEqual(["planner", "done", "", undefined])
    expect(harness.channel.progressUpdates.at(-1)!.update).toMatchObject({ outcome: "done", title: expect.any(String) })
  })

  it("continues an earlier task session when delegate passes its session_id", async () => {
    let firstSession = ""
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return done
          const match = req.lastUserText.match(/session_id: (\w+)/)
          if (match && !firstSession) {
            firstSession = match[1]!
            return { toolCalls: [{ name: "delegate", args: { prompt: "second request", session_id: firstSession } }] }
          }
          if (match) return say("finished")
          return { toolCalls: [{ name: "delegate", args: { prompt: "first request" } }] }
        },
        planner: (req) => ({ text: `planner saw ${req.messages.filter((m) => m.role === "user").length} user messages` }),
      }),
    )
    await harness.channel.say("go")
    await harness.channel.waitForSent(1)
    const plannerRequests = harness.server.requests.filter((r) => r.role === "planner")
    expect(plannerRequests).toHaveLength(2)
    expect(JSON.stringify(plannerRequests[1]!.body)).toContain("first request")
    const tasks = await harness.app.store.tasks()
    expect(tasks[1]!.sessionId).toBe(tasks[0]!.sessionId)
  })
})

function ctxFor(h: Harness, callId: string) {
  return {
    role: "teller" as const,
    agent: "teller",
    conversation: "test:c1",
    user: "test:u1",
    sessionId: "teller-session",
    callId,
    abort: new AbortController().signal,
  }
}
