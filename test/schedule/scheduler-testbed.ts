import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, vi } from "vitest"
import type { FiringRecord, TaskStatus, TriggerRecord } from "../../src/core/types.ts"
import type { ScheduleRequest } from "../../src/schedule/request.ts"
import { Scheduler, type SchedulerHost } from "../../src/schedule/scheduler.ts"
import { Store } from "../../src/store/store.ts"

/**
 * What the Scheduler's tests run on: a fresh store and FakeHost for each test, a started
 * Scheduler the test file keeps (and may replace, to restart it), a fake clock, and helpers
 * that create triggers and move the clock.
 */

/** Timers and the clock are fake; setImmediate stays real, SQLite's I/O needs the real loop. */
const FAKE: Parameters<typeof vi.useFakeTimers>[0] = { toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] }

/** Starts runs as task-1, task-2, … (once per firing, like the real host) and keeps notices. */
export class FakeHost implements SchedulerHost {
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

export const log = pino({ level: "silent" })
export const where = (origin: string) => ({ conversation: "c1", user: "u1", origin })

/** The current test's data folder, store and host. */
export let dir: string
export let db: Store
export let host: FakeHost
/** The test file's scheduler, as it holds it now. */
let scheduler: () => Scheduler = () => {
  throw new Error("schedulerPerTest() was not called")
}

/** Gives each test of the file a fresh store, host and started scheduler (`set`), and stops
 *  the scheduler the file holds at its end (`get`, so one a test started instead is stopped). */
export function schedulerPerTest(binding: { get(): Scheduler; set(started: Scheduler): void }): void {
  scheduler = binding.get
  beforeEach(async () => {
    vi.useFakeTimers(FAKE)
    vi.setSystemTime(new Date("2026-01-05T10:00:00Z"))
    dir = mkdtempSync(join(tmpdir(), "steward-scheduler-"))
    db = await Store.open(dir)
    host = new FakeHost()
    binding.set(await startScheduler())
  })

  afterEach(async () => {
    await scheduler().stop()
    await db.close()
    vi.useRealTimers()
    rmSync(dir, { recursive: true, force: true })
  })
}

export async function startScheduler(options: { pollMs?: number; on?: Store } = {}): Promise<Scheduler> {
  // A slow poll unless a test is about it: each poll is a real query the fake clock does not wait for.
  const started = new Scheduler({ store: options.on ?? db, host, log, pollMs: options.pollMs ?? 3_600_000 })
  await started.start()
  return started
}

/** Moves the fake clock to `iso` (firing what is due on the way) and lets the engine finish. */
export async function advanceTo(iso: string): Promise<void> {
  await vi.advanceTimersByTimeAsync(Date.parse(iso) - Date.now())
  await scheduler().settled()
}

export async function firings(triggerId: string): Promise<FiringRecord[]> {
  return db.schedules.firingsOf(triggerId)
}

export function create(request: Partial<ScheduleRequest> & Pick<ScheduleRequest, "type">, origin = "s1:call1") {
  return scheduler().create({ prompt: "check the build", ...request } as ScheduleRequest, where(origin))
}
