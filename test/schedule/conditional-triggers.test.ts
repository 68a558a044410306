import { describe, expect, it, vi } from "vitest"
import { raiseEvent, RaisedEvents } from "../../src/schedule/events.ts"
import type { Scheduler } from "../../src/schedule/scheduler.ts"
import { Store } from "../../src/store/store.ts"
import { advanceTo, create, db, dir, firings, host, schedulerPerTest, startScheduler } from "./scheduler-testbed.ts"

let scheduler: Scheduler
schedulerPerTest({ get: () => scheduler, set: (started) => (scheduler = started) })

describe("conditional triggers", () => {
  it("fires each time the event is raised, waits out the cooldown, and keeps an event raised during it", async () => {
    const { taskId } = await create({ type: "conditional", condition: { kind: "event", name: "deploy" }, cooldown: 300 })
    await advanceTo("2026-01-05T10:01:00Z")
    await scheduler.raise("deploy")
    await scheduler.settled()
    expect(host.runs).toHaveLength(1)
    await scheduler.taskEnded("task-1", "completed")
    await advanceTo("2026-01-05T10:02:00Z")
    await scheduler.raise("deploy") // within the cooldown
    await scheduler.settled()
    expect(host.runs).toHaveLength(1)
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-01-05T10:06:00.000Z")
    await advanceTo("2026-01-05T10:06:00Z")
    expect(host.runs).toHaveLength(2)
    await scheduler.taskEnded("task-2", "completed")
    await advanceTo("2026-01-05T11:00:00Z")
    expect(host.runs).toHaveLength(2) // no new event, no new firing
    expect((await firings(taskId)).map((f) => [f.scheduledFor, f.outcome])).toEqual([
      ["2026-01-05T10:01:00.000Z", "fired"],
      ["2026-01-05T10:06:00.000Z", "fired"],
    ])
  })

  it("fires twice for two events without a cooldown", async () => {
    await create({ type: "conditional", condition: { kind: "event", name: "deploy" } })
    await scheduler.raise("deploy")
    await scheduler.taskEnded("task-1", "completed")
    await advanceTo("2026-01-05T10:00:01Z")
    await scheduler.raise("deploy")
    await scheduler.settled()
    expect(host.runs).toHaveLength(2)
  })

  it("does not take a second event for a condition that stays true when it comes before the first is processed", async () => {
    // Another trigger's run start keeps the engine busy while both events arrive.
    let unblock!: () => void
    const started = host.startRun.bind(host)
    host.startRun = (trigger, firing) => new Promise<string>((resolve) => (unblock = () => resolve(started(trigger, firing))))
    await create({ type: "scheduled", runAt: "2026-01-05T10:00:10Z" }, "s1:a")
    const { taskId } = await create({ type: "conditional", condition: { kind: "event", name: "deploy" } }, "s1:b")
    await vi.advanceTimersByTimeAsync(10_000)
    await scheduler.raise("deploy")
    vi.setSystemTime(Date.now() + 1)
    await scheduler.raise("deploy")
    host.startRun = started
    unblock()
    await scheduler.settled()
    expect(scheduler.list("c1").map((t) => t.id)).toEqual([taskId])
    expect((await firings(taskId)).map((f) => f.outcome)).toEqual(["fired", "skipped_overlap"]) // its first run is still running
  })

  it("fires once and ends when its condition stays true; ends and tells the owner when it can never hold", async () => {
    host.statuses.set("t-dep", "running")
    const once = await create({ type: "conditional", condition: { kind: "task", taskId: "t-dep" } }, "s1:a")
    const never = await create({ type: "conditional", condition: { kind: "task", taskId: "t-dep", status: "failed" } }, "s1:b")
    host.statuses.set("t-dep", "completed")
    await scheduler.taskEnded("t-dep", "completed")
    await scheduler.settled()
    expect(host.runs.map((run) => run.trigger.id)).toEqual([once.taskId])
    expect(await db.schedules.trigger(once.taskId)).toMatchObject({ status: "ended", endReason: "its condition stays true" })
    expect(await db.schedules.trigger(never.taskId)).toMatchObject({ status: "ended", endReason: "its condition can no longer hold" })
    expect(host.notices).toEqual([expect.stringContaining("its condition can no longer hold")])
  })

  it("reads from the store the status of an ended task the host no longer holds", async () => {
    await db.save({ tasks: [{ id: "t-old", role: "worker", agent: "general", type: "oneshot", prompt: "p", priority: 5, timeout: null, status: "completed", conversation: "c1", user: "u1", parentSessionId: "s", sessionId: "s2", origin: "s:old", attempts: 1, createdAt: "2026-01-01T00:00:00Z", endedAt: "2026-01-01T00:00:01Z", reported: true }] })
    const decided: string[] = []
    scheduler.wait("w1", { kind: "task", taskId: "t-old" }, "2026-01-05T10:00:00Z", (result) => decided.push(result))
    scheduler.wait("w2", { kind: "task", taskId: "t-missing" }, "2026-01-05T10:00:00Z", (result) => decided.push(`missing ${result}`))
    await vi.waitFor(() => expect(decided.sort()).toEqual(["holds", "missing never"]))
    expect(scheduler.taskStatus("t-old")).toBe("completed")
  })

  it("takes events another process wrote to the same database, at the next poll", async () => {
    await scheduler.stop()
    scheduler = await startScheduler({ pollMs: 1000 })
    await create({ type: "conditional", condition: { kind: "event", name: "backup.done" } })
    const cli = await Store.open(dir)
    try {
      await raiseEvent(cli, "backup.done")
      await vi.advanceTimersByTimeAsync(1000)
      await vi.waitFor(async () => {
        await scheduler.settled()
        expect(host.runs).toHaveLength(1)
      })
    } finally {
      await cli.close()
    }
  })

  it("polls only events it has not seen yet", async () => {
    const events = new RaisedEvents(db)
    await raiseEvent(db, "old")
    await events.load()
    expect(await events.poll()).toBe(false)
    await raiseEvent(db, "new")
    expect(await events.poll()).toBe(true)
    expect(await events.poll()).toBe(false)
    expect(events.raisedSince("new", "2026-01-05T10:00:00Z")).toBe(true)
    expect(events.raisedSince("new", "2026-01-05T10:00:00.001Z")).toBe(false)
  })
})

describe("condition waits", () => {
  const since = "2026-01-05T10:00:00.000Z"

  it("decides a task condition when the task ends: completed holds, cancelled or failed-when-completed-required never", async () => {
    const results: Record<string, string> = {}
    for (const id of ["a", "b", "c"]) host.statuses.set(id, "running")
    scheduler.wait("w1", { kind: "task", taskId: "a" }, since, (r) => (results.w1 = r))
    scheduler.wait("w2", { kind: "task", taskId: "b", status: "any" }, since, (r) => (results.w2 = r))
    scheduler.wait("w3", { kind: "task", taskId: "c" }, since, (r) => (results.w3 = r))
    scheduler.wait("w4", { kind: "all", of: [{ kind: "task", taskId: "a" }, { kind: "event", name: "go" }] }, since, (r) => (results.w4 = r))
    scheduler.wait("w5", { kind: "any", of: [{ kind: "task", taskId: "b" }, { kind: "task", taskId: "c" }] }, since, (r) => (results.w5 = r))
    expect(results).toEqual({})
    host.statuses.set("a", "completed")
    await scheduler.taskEnded("a", "completed")
    host.statuses.set("b", "cancelled")
    await scheduler.taskEnded("b", "cancelled")
    host.statuses.set("c", "failed")
    await scheduler.taskEnded("c", "failed")
    expect(results).toEqual({ w1: "holds", w2: "holds", w3: "never", w5: "never" })
    await scheduler.raise("go")
    expect(results.w4).toBe("holds")
  })

  it("decides a time condition at its time, and not at all once unwaited", async () => {
    const results: string[] = []
    scheduler.wait("w1", { kind: "time", at: "2026-01-05T10:30:00Z" }, since, (r) => results.push(`w1 ${r}`))
    scheduler.wait("w2", { kind: "time", at: "2026-01-05T10:20:00Z" }, since, (r) => results.push(`w2 ${r}`))
    scheduler.unwait("w2")
    await advanceTo("2026-01-05T10:29:59Z")
    expect(results).toEqual([])
    await advanceTo("2026-01-05T10:30:00Z")
    expect(results).toEqual(["w1 holds"])
  })
})
