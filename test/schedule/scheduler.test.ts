import { describe, expect, it, vi } from "vitest"
import { Scheduler } from "../../src/schedule/scheduler.ts"
import { advanceTo, create, db, firings, host, log, schedulerPerTest, startScheduler, where } from "./scheduler-testbed.ts"

let scheduler: Scheduler
schedulerPerTest({ get: () => scheduler, set: (started) => (scheduler = started) })

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

  it("ends a schedule it cannot re-arm at start-up, telling the user a reference, not the error", async () => {
    const { taskId } = await create({ type: "recurring", cron: "0 * * * *" })
    await scheduler.stop()
    // A record no reading accepts any more (a newer cron parser, a hand edit): arming it throws.
    await db.save({ triggers: [{ ...(await db.schedules.trigger(taskId))!, cron: "not a cron expression" }] })
    vi.setSystemTime(new Date("2026-01-05T11:05:00Z")) // its 11:00 run was missed
    scheduler = await startScheduler()
    expect(host.notices).toEqual([expect.stringMatching(/ended: it could not be re-armed: an internal error \(reference ref-[0-9a-f]{8}\)\.$/)])
  })

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
    const trigger = (await db.schedules.trigger(taskId))!
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
    expect(await db.schedules.trigger(taskId)).toMatchObject({ status: "ended", lastOutcome: "delivered" })
  })

  it("keeps a report's delivery when the run's end is recorded after it (a new leader following the run), and counts it once", async () => {
    await scheduler.stop()
    const reached: string[] = []
    scheduler = new Scheduler({ store: db, host, log, pollMs: 3_600_000, onFiring: (status) => reached.push(status) })
    await scheduler.start()
    const { taskId } = await create({ type: "scheduled", runAt: "2026-01-05T11:00:00Z" })
    await advanceTo("2026-01-05T11:00:00Z")
    await scheduler.delivered(host.runs[0]!.firing.id, "m7")
    await scheduler.taskEnded("task-1", "completed")
    expect(await firings(taskId)).toMatchObject([{ status: "delivered", messageId: "m7" }])
    expect(reached).toEqual(["fired", "delivered"])
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
