import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { raiseEvent, RaisedEvents } from "../../src/schedule/events.ts"
import type { FiringRecord, TaskStatus, TriggerRecord } from "../../src/core/types.ts"
import type { ScheduleRequest } from "../../src/schedule/request.ts"
import { Scheduler, type SchedulerHost } from "../../src/schedule/scheduler.ts"
import { Store } from "../../src/store/store.ts"

/** Timers and the clock are fake; setImmediate stays real, SQLite's I/O needs the real loop. */
const FAKE: Parameters<typeof vi.useFakeTimers>[0] = { toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] }

/** Starts runs as task-1, task-2, … (once per firing, like the real host) and keeps notices. */
class FakeHost implements SchedulerHost {
  runs: Array<{ trigger: TriggerRecord; firing: FiringRecord; taskId: string }> = []
  statuses = new Map<string, TaskStatus>()
  notices: string[] = []
  async startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<string> {
    const known = this.runs.find((run) => run.firing.id === firing.id)
    if (known) return known.taskId
    const taskId = `task-${this.runs.length + 1}`
    this.runs.push({ trigger, firing, taskId })
    this.statuses.set(taskId, "queued")
    return taskId
  }
  taskStatus(taskId: string): TaskStatus | undefined {
    return this.statuses.get(taskId)
  }
  async notify(_trigger: TriggerRecord, text: string): Promise<void> {
    this.notices.push(text)
  }
}

const log = pino({ level: "silent" })
const where = (origin: string) => ({ conversation: "c1", user: "u1", origin })

let dir: string
let db: Store
let host: FakeHost
let scheduler: Scheduler

beforeEach(async () => {
  vi.useFakeTimers(FAKE)
  vi.setSystemTime(new Date("2026-01-05T10:00:00Z"))
  dir = mkdtempSync(join(tmpdir(), "steward-scheduler-"))
  db = await Store.open(dir)
  host = new FakeHost()
  scheduler = await startScheduler()
})

afterEach(async () => {
  await scheduler.stop()
  await db.close()
  vi.useRealTimers()
  rmSync(dir, { recursive: true, force: true })
})

async function startScheduler(options: { pollMs?: number; on?: Store } = {}): Promise<Scheduler> {
  // A slow poll unless a test is about it: each poll is a real query the fake clock does not wait for.
  const started = new Scheduler({ store: options.on ?? db, host, log, pollMs: options.pollMs ?? 3_600_000 })
  await started.start()
  return started
}

/** Moves the fake clock to `iso` (firing what is due on the way) and lets the engine finish. */
async function advanceTo(iso: string): Promise<void> {
  await vi.advanceTimersByTimeAsync(Date.parse(iso) - Date.now())
  await scheduler.settled()
}

async function firings(triggerId: string): Promise<FiringRecord[]> {
  return db.firingsOf(triggerId)
}

function create(request: Partial<ScheduleRequest> & Pick<ScheduleRequest, "type">, origin = "s1:call1") {
  return scheduler.create({ prompt: "check the build", ...request } as ScheduleRequest, where(origin))
}

describe("recurring by interval", () => {
  it("fires every interval from its creation, and records each firing", async () => {
    const { taskId } = await create({ type: "recurring", interval: 600 })
    await advanceTo("2026-01-05T10:09:59Z")
    expect(host.runs).toHaveLength(0)
    await advanceTo("2026-01-05T10:10:00Z")
    expect(host.runs).toHaveLength(1)
    await scheduler.taskEnded("task-1", "completed")
    await advanceTo("2026-01-05T10:20:00Z")
    expect(host.runs.map((run) => run.firing.scheduledFor)).toEqual(["2026-01-05T10:10:00.000Z", "2026-01-05T10:20:00.000Z"])
    const records = await firings(taskId)
    expect(records.map((f) => [f.outcome, f.status, f.taskId])).toEqual([
      ["fired", "ran", "task-1"],
      ["fired", "fired", "task-2"],
    ])
    expect(scheduler.list("c1")).toEqual([
      { id: taskId, kind: "recurring", prompt: "check the build", user: "u1", nextRunAt: "2026-01-05T10:30:00.000Z", lastOutcome: "fired", status: "active", createdAt: "2026-01-05T10:00:00.000Z" },
    ])
  })
})

describe("recurring by cron in a time zone", () => {
  it('reads "0 9 * * *" in Europe/Berlin wall-clock time across the March DST change', async () => {
    vi.setSystemTime(new Date("2026-03-27T10:00:00Z"))
    const { taskId } = await create({ type: "recurring", cron: "0 9 * * *", timezone: "Europe/Berlin" })
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-03-28T08:00:00.000Z") // CET, UTC+1
    for (const due of ["2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"]) {
      await advanceTo(due)
      await scheduler.taskEnded(host.runs.at(-1)!.taskId, "completed")
    }
    // Sunday 29 March is the change: from then on 09:00 is CEST, UTC+2.
    expect((await firings(taskId)).map((f) => [f.scheduledFor, f.outcome])).toEqual([
      ["2026-03-28T08:00:00.000Z", "fired"],
      ["2026-03-29T07:00:00.000Z", "fired"],
      ["2026-03-30T07:00:00.000Z", "fired"],
    ])
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-03-31T07:00:00.000Z")
  })

  it("runs 02:30 right after the spring-forward jump that day, and once, at the first occurrence, on the day it exists twice (cronie)", async () => {
    vi.setSystemTime(new Date("2026-03-27T12:00:00Z"))
    const { taskId } = await create({ type: "recurring", cron: "30 2 * * *", timezone: "Europe/Berlin" })
    await advanceTo("2026-03-28T01:30:00Z") // Saturday 02:30 CET
    await scheduler.taskEnded("task-1", "completed")
    // Sunday 29 March jumps from 02:00 to 03:00: no 02:30, so it runs at 03:00 CEST that day.
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-03-29T01:00:00.000Z")
    await advanceTo("2026-03-29T01:00:00Z")
    await scheduler.taskEnded("task-2", "completed")
    expect((await firings(taskId)).map((f) => [f.scheduledFor, f.outcome])).toEqual([
      ["2026-03-28T01:30:00.000Z", "fired"],
      ["2026-03-29T01:00:00.000Z", "fired"],
    ])
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-03-30T00:30:00.000Z")

    // Sunday 25 October has 02:30 twice (CEST, then CET): only the first, then Monday's.
    vi.setSystemTime(new Date("2026-10-24T12:00:00Z"))
    const autumn = await create({ type: "recurring", cron: "30 2 * * *", timezone: "Europe/Berlin" }, "s1:call2")
    expect(scheduler.list("c1").find((t) => t.id === autumn.taskId)!.nextRunAt).toBe("2026-10-25T00:30:00.000Z")
    await advanceTo("2026-10-25T00:30:00Z")
    expect(scheduler.list("c1").find((t) => t.id === autumn.taskId)!.nextRunAt).toBe("2026-10-26T01:30:00.000Z")
  })

  it("runs a wildcard expression through both passes of the repeated autumn hour", async () => {
    vi.setSystemTime(new Date("2026-10-24T23:50:00Z"))
    const { taskId } = await create({ type: "recurring", cron: "0 * * * *", timezone: "Europe/Berlin" })
    for (const due of ["2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"]) {
      await advanceTo(due)
      await scheduler.taskEnded(host.runs.at(-1)!.taskId, "completed")
    }
    // 02:00 CEST, 02:00 CET, 03:00 CET
    expect((await firings(taskId)).map((f) => f.scheduledFor)).toEqual(["2026-10-25T00:00:00.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00.000Z"])
  })
})

describe("overlap", () => {
  it("skips a due time while the previous run is still running, records it, and fires again once it ended", async () => {
    const { taskId } = await create({ type: "recurring", interval: 600 })
    await advanceTo("2026-01-05T10:10:00Z")
    await advanceTo("2026-01-05T10:20:00Z")
    expect(host.runs).toHaveLength(1)
    expect(scheduler.list("c1")[0]!.lastOutcome).toBe("skipped_overlap")
    await scheduler.taskEnded("task-1", "timed_out")
    await advanceTo("2026-01-05T10:30:00Z")
    expect(host.runs).toHaveLength(2)
    expect((await firings(taskId)).map((f) => [f.scheduledFor, f.outcome, f.status])).toEqual([
      ["2026-01-05T10:10:00.000Z", "fired", "failed"],
      ["2026-01-05T10:20:00.000Z", "skipped_overlap", "skipped"],
      ["2026-01-05T10:30:00.000Z", "fired", "fired"],
    ])
  })
})

describe("missed runs and restarts", () => {
  /** Stops the scheduler, lets the clock run to `iso` with nothing armed, and starts a new one. */
  async function downUntil(iso: string): Promise<void> {
    await scheduler.stop()
    vi.setSystemTime(new Date(iso))
    scheduler = await startScheduler()
  }

  it("runs a missed due time once when it is late by at most maxLateness, as missed_run", async () => {
    const { taskId } = await create({ type: "recurring", interval: 600 })
    await downUntil("2026-01-05T10:45:00Z") // 10:10, 10:20, 10:30 and 10:40 passed
    expect(host.runs).toHaveLength(1)
    const [missed] = await firings(taskId)
    expect(missed).toMatchObject({ outcome: "missed_run", scheduledFor: "2026-01-05T10:40:00.000Z", missedFrom: "2026-01-05T10:10:00.000Z", status: "fired" })
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-01-05T10:50:00.000Z")
    expect(host.notices).toEqual([])
  })

  it("catches up with a cron due time of today after a day down, not the stale one of yesterday", async () => {
    const { taskId } = await create({ type: "recurring", cron: "0 9 * * *", timezone: "Europe/Berlin" })
    await downUntil("2026-01-07T08:05:00Z") // 09:05 in Berlin, two days later
    expect((await firings(taskId)).map((f) => [f.outcome, f.scheduledFor, f.missedFrom])).toEqual([
      ["missed_run", "2026-01-07T08:00:00.000Z", "2026-01-06T08:00:00.000Z"],
    ])
    expect(scheduler.list("c1")[0]!.nextRunAt).toBe("2026-01-08T08:00:00.000Z")
  })

  it("catches up after downtime across DST by the same rules: a fixed time once at its first occurrence, a wildcard one at the second pass", async () => {
    vi.setSystemTime(new Date("2026-10-24T22:00:00Z"))
    const fixed = await create({ type: "recurring", cron: "30 2 * * *", timezone: "Europe/Berlin", maxLateness: 7200 }, "s1:a")
    const wild = await create({ type: "recurring", cron: "30 * * * *", timezone: "Europe/Berlin" }, "s1:b")
    await downUntil("2026-10-25T01:45:00Z") // 02:45 CET, in the second pass of the repeated hour
    // 02:30 CEST was the fixed one's only due time; the wildcard one's latest is 02:30 CET.
    expect((await firings(fixed.taskId)).map((f) => [f.outcome, f.scheduledFor])).toEqual([["missed_run", "2026-10-25T00:30:00.000Z"]])
    expect((await firings(wild.taskId)).map((f) => [f.outcome, f.scheduledFor])).toEqual([["missed_run", "2026-10-25T01:30:00.000Z"]])
    expect(scheduler.list("c1").map((t) => t.nextRunAt).sort()).toEqual(["2026-10-25T02:30:00.000Z", "2026-10-26T01:30:00.000Z"])
  })

  it("skips a due time later than maxLateness, or any with onMissed skip, records it and tells the owner", async () => {
    const late = await create({ type: "scheduled", runAt: "2026-01-05T11:00:00Z", maxLateness: 600 }, "s1:a")
    const skip = await create({ type: "recurring", interval: 3600, onMissed: "skip" }, "s1:b")
    await downUntil("2026-01-05T11:20:00Z")
    expect(host.runs).toHaveLength(0)
    expect((await firings(late.taskId)).map((f) => [f.outcome, f.status])).toEqual([["missed_skipped", "skipped"]])
    expect((await firings(skip.taskId)).map((f) => [f.outcome, f.scheduledFor])).toEqual([["missed_skipped", "2026-01-05T11:00:00.000Z"]])
    expect(scheduler.list("c1").map((t) => [t.id, t.nextRunAt])).toEqual([[skip.taskId, "2026-01-05T12:00:00.000Z"]]) // the one-shot ended
    expect(host.notices).toHaveLength(2)
    expect(host.notices[0]).toMatch(/was due at 2026-01-05T11:00:00.000Z while Steward was not running.*skipped/)
  })

  it("re-arms on restart without firing twice, and settles a run that ended while it was down", async () => {
    const { taskId } = await create({ type: "recurring", interval: 600 })
    await advanceTo("2026-01-05T10:10:00Z")
    host.statuses.set("task-1", "completed") // ends while Steward is down
    await downUntil("2026-01-05T10:15:00Z")
    expect(host.runs).toHaveLength(1)
    await advanceTo("2026-01-05T10:20:00Z")
    expect(host.runs).toHaveLength(2)
    expect((await firings(taskId)).map((f) => [f.outcome, f.status])).toEqual([
      ["fired", "ran"],
      ["fired", "fired"],
    ])
  })

  it("tells the owner once about each failed run: reported elsewhere, never started, or lost in a restart", async () => {
    const elsewhere = await create({ type: "recurring", interval: 600, target: "c2" }, "s1:a")
    await advanceTo("2026-01-05T10:10:00Z")
    await scheduler.taskEnded("task-1", "failed")
    expect(host.notices).toEqual([`A run of the schedule ${elsewhere.taskId} (“check the build”) failed: the run ended failed. Its report went to c2.`])

    await scheduler.cancel(elsewhere.taskId, "c1")
    host.notices = []
    const startRun = host.startRun
    host.startRun = async () => {
      throw new Error("queue is closed")
    }
    await create({ type: "scheduled", runAt: "2026-01-05T10:30:00Z", target: "c2" }, "s1:b")
    await advanceTo("2026-01-05T10:30:00Z")
    // What failed is the log's; the notice names a reference.
    expect(host.notices).toEqual([expect.stringMatching(/was due, but its run could not be started: an internal error \(reference ref-[0-9a-f]{8}\)\.$/)])

    host.notices = []
    host.startRun = startRun
    const lost = await create({ type: "scheduled", runAt: "2026-01-05T10:40:00Z" }, "s1:c")
    await advanceTo("2026-01-05T10:40:00Z")
    host.statuses.clear() // the run's task is unknown after the restart
    await downUntil("2026-01-05T10:45:00Z")
    expect(host.notices).toEqual([`A run of the schedule ${lost.taskId} (“check the build”) failed: its task was lost.`])
  })

  it("starts the run again when Steward stopped between recording a firing and learning its task", async () => {
    const { taskId } = await create({ type: "recurring", interval: 600 })
    await advanceTo("2026-01-05T10:10:00Z")
    // As if the crash came before the task id was written: the firing is recorded, the run is not.
    const trigger = (await db.trigger(taskId))!
    await db.save({ triggers: [{ ...trigger, runningTaskId: undefined }] })
    await downUntil("2026-01-05T10:11:00Z")
    expect(host.runs).toHaveLength(1) // the host found the run of that firing
    await scheduler.taskEnded("task-1", "completed")
    expect((await firings(taskId)).map((f) => f.status)).toEqual(["ran"])
  })
})

describe("scheduled", () => {
  it("fires once at runAt, ends, and follows its firing to delivered", async () => {
    const { taskId } = await create({ type: "scheduled", runAt: "2026-01-05T12:00:00+01:00" })
    await advanceTo("2026-01-05T11:00:00Z")
    expect(host.runs).toHaveLength(1)
    expect(scheduler.list("c1")).toEqual([])
    await scheduler.taskEnded("task-1", "completed")
    await scheduler.delivered(host.runs[0]!.firing.id, "m42")
    await advanceTo("2026-01-06T11:00:00Z")
    expect(host.runs).toHaveLength(1)
    expect(await firings(taskId)).toMatchObject([{ outcome: "fired", status: "delivered", messageId: "m42", taskId: "task-1" }])
    expect(await db.trigger(taskId)).toMatchObject({ status: "ended", lastOutcome: "delivered" })
  })

  it("records a report that could not be delivered, and a run that could not be started", async () => {
    const first = await create({ type: "scheduled", runAt: "2026-01-05T11:00:00Z" }, "s1:a")
    await advanceTo("2026-01-05T11:00:00Z")
    await scheduler.taskEnded("task-1", "completed")
    await scheduler.deliveryFailed(host.runs[0]!.firing.id, "chat not found")
    expect(await firings(first.taskId)).toMatchObject([{ status: "failed", error: "chat not found" }])

    host.startRun = async () => {
      throw new Error("queue is closed")
    }
    const second = await create({ type: "scheduled", runAt: "2026-01-05T12:00:00Z" }, "s1:b")
    await advanceTo("2026-01-05T12:00:00Z")
    expect(await firings(second.taskId)).toMatchObject([{ status: "failed", error: expect.stringMatching(/^its run could not be started: an internal error \(reference ref-/) }])
    expect(host.notices).toEqual([expect.stringContaining("its run could not be started: an internal error (reference ref-")])
  })
})

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
    expect(await db.trigger(once.taskId)).toMatchObject({ status: "ended", endReason: "its condition stays true" })
    expect(await db.trigger(never.taskId)).toMatchObject({ status: "ended", endReason: "its condition can no longer hold" })
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

describe("create, cancel and list", () => {
  it("creates once per tool call, cancels only in its own conversation, and stops firing once cancelled", async () => {
    const first = await create({ type: "recurring", interval: 600 })
    expect(await create({ type: "recurring", interval: 600 })).toEqual(first)
    expect(await scheduler.cancel(first.taskId, "c2")).toBe(false)
    expect(await scheduler.cancel(first.taskId, "c1")).toBe(true)
    expect(await scheduler.cancel(first.taskId, "c1")).toBe(false)
    await advanceTo("2026-01-05T11:00:00Z")
    expect(host.runs).toHaveLength(0)
    expect(scheduler.list("c1")).toEqual([])
  })

  it("rejects an invalid request, and a runAt that is not ahead or more than a calendar year ahead", async () => {
    await expect(create({ type: "recurring", interval: 30 })).rejects.toThrow(/>=60/)
    await expect(create({ type: "scheduled", runAt: "2026-01-05T09:59:59Z" })).rejects.toThrow("runAt 2026-01-05T09:59:59Z is not in the future (now: 2026-01-05T10:00:00.000Z)")
    await expect(create({ type: "scheduled", runAt: "2027-01-05T10:00:01Z" })).rejects.toThrow("runAt 2027-01-05T10:00:01Z is more than a year ahead")
    await expect(create({ type: "scheduled", runAt: "2027-01-05T10:00:00Z" })).resolves.toMatchObject({ taskId: expect.any(String) })
  })

  it("judges runAt against when the work was asked for: one that passed since is due at once, one already past then is refused", async () => {
    const asked = { ...where("s1:late"), askedAt: "2026-01-05T09:55:00Z" }
    await expect(scheduler.create({ prompt: "p", type: "scheduled", runAt: "2026-01-05T09:54:59Z" }, asked)).rejects.toThrow("runAt 2026-01-05T09:54:59Z was not in the future when this was asked for (2026-01-05T09:55:00.000Z)")
    const { taskId } = await scheduler.create({ prompt: "p", type: "scheduled", runAt: "2026-01-05T09:59:30Z" }, asked)
    await advanceTo("2026-01-05T10:00:01Z")
    expect(host.runs).toHaveLength(1)
    expect(await firings(taskId)).toMatchObject([{ outcome: "fired", scheduledFor: "2026-01-05T09:59:30.000Z" }])
    // Later than a minute: run once as missed, within maxLateness.
    const { taskId: later } = await scheduler.create({ prompt: "p", type: "scheduled", runAt: "2026-01-05T09:56:00Z" }, { ...asked, origin: "s1:later" })
    await advanceTo("2026-01-05T10:00:02Z")
    expect(await firings(later)).toMatchObject([{ outcome: "missed_run", status: "fired" }])
  })

  it("returns the same trigger to a call replayed after its runAt has passed", async () => {
    const { taskId } = await create({ type: "scheduled", runAt: "2026-01-05T10:30:00Z" })
    await advanceTo("2026-01-05T11:00:00Z")
    expect(await create({ type: "scheduled", runAt: "2026-01-05T10:30:00Z" })).toEqual({ taskId })
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

describe("firing statuses for the metrics", () => {
  it("reports each status a firing reaches once: fired, ran, delivered; a skipped due time as skipped", async () => {
    await scheduler.stop()
    const reached: string[] = []
    scheduler = new Scheduler({ store: db, host, log, pollMs: 3_600_000, onFiring: (status) => reached.push(status) })
    await scheduler.start()
    await create({ type: "recurring", interval: 600 })
    await advanceTo("2026-01-05T10:10:00Z")
    await advanceTo("2026-01-05T10:20:00Z") // the first run is still under way: skipped (overlap)
    await scheduler.taskEnded("task-1", "completed")
    await scheduler.delivered(host.runs[0]!.firing.id, "m1")
    await scheduler.settled()
    expect(reached).toEqual(["fired", "skipped", "ran", "delivered"])
  })
})
