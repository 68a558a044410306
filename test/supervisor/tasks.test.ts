import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { byRole, sequence } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, say } from "../support/scripts.ts"
import { waitFor } from "../support/wait-for.ts"
import { deferred, delegatingTeller, dispatching, done, echoTeller, hangsFirst } from "./scripted-agents.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

describe("Supervisor", () => {
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
