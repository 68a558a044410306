import pino from "pino"
import type PgBoss from "pg-boss"
import { afterEach, describe, expect, it } from "vitest"
import { LeaderCalls, type CallHandlers } from "../../src/cluster/leader-calls.ts"
import { ClusterLink } from "../../src/cluster/link.ts"
import { Claimer, dispatchTask, jobIdOf, startBoss, TASK_QUEUES, type TaskJob } from "../../src/cluster/queues.ts"
import { newTask } from "../../src/supervisor/task-records.ts"
import { ToolError } from "../../src/tool/tool.ts"
import { freshDatabase, type FreshDatabase } from "../support/pg.ts"
import { waitFor } from "../support/wait-for.ts"

const log = pino({ level: "silent" })
let db: FreshDatabase | undefined
const closers: Array<() => Promise<void>> = []

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
  await db?.drop()
  db = undefined
})

async function boss(): Promise<PgBoss> {
  db ??= await freshDatabase()
  const started = await startBoss(db.url, 1, log)
  closers.push(() => started.stop({ graceful: false, wait: true }))
  return started
}

async function link(): Promise<ClusterLink> {
  const opened = await ClusterLink.connect(db!.url, log, () => {})
  closers.push(() => opened.close())
  return opened
}

const task = (priority: number) => ({ ...newTask({ conversation: "test:c1", user: "test:u1", sessionId: "s" }, `o${priority}`, "worker", "default"), priority, status: "running" as const, attempts: 1, runs: 1 })

describe("the task queues", () => {
  it("names a task's run by one job id, a UUID, the same wherever it is computed", () => {
    expect(jobIdOf("01TASK", 1)).toBe(jobIdOf("01TASK", 1))
    expect(jobIdOf("01TASK", 1)).not.toBe(jobIdOf("01TASK", 2))
    expect(jobIdOf("01TASK", 1)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it("queues a run once however often it is dispatched (a new leader dispatching it again)", async () => {
    const queue = await boss()
    const one = task(5)
    await dispatchTask(queue, one, 60, 1)
    await dispatchTask(queue, one, 60, 1)
    expect(await queue.getQueueSize(TASK_QUEUES.worker)).toBe(1)
    const jobs = await queue.fetch<TaskJob>(TASK_QUEUES.worker, { batchSize: 10 })
    expect(jobs.map((job) => job.data)).toEqual([{ taskId: one.id, run: 1 }])
  })

  it("claims at most its concurrency at a time, higher priority first", async () => {
    const queue = await boss()
    const tasks = [task(1), task(9), task(5), task(9)]
    for (const one of tasks) await dispatchTask(queue, one, 60, 1)
    const order: string[] = []
    let inHand = 0
    let most = 0
    const releases: Array<() => void> = []
    const claimer = new Claimer<TaskJob>(queue, TASK_QUEUES.worker, 2, async (job) => {
      order.push(job.data.taskId)
      most = Math.max(most, ++inHand)
      await new Promise<void>((resolve) => releases.push(resolve))
      inHand--
      await queue.complete(TASK_QUEUES.worker, job.id)
    }, log, 50)
    claimer.start()
    closers.push(() => claimer.stop())
    await waitFor(() => releases.length === 2)
    expect(new Set(order)).toEqual(new Set([tasks[1]!.id, tasks[3]!.id]))
    releases.splice(0).forEach((release) => release())
    await waitFor(() => order.length === 4 && releases.length === 2)
    releases.splice(0).forEach((release) => release())
    expect(order.slice(2)).toEqual([tasks[2]!.id, tasks[0]!.id])
    expect(most).toBe(2)
  })
})

describe("the job queues at start-up", () => {
  it("are created once when three processes start at once on a fresh database (no deadlock ends one of them)", { timeout: 60_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = await freshDatabase()
      try {
        const started = await Promise.allSettled([0, 1, 2].map(() => startBoss(fresh.url, 1, log)))
        const bosses = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []))
        expect(started.flatMap((result) => (result.status === "rejected" ? [String(result.reason)] : []))).toEqual([])
        expect((await bosses[0]!.getQueues()).map((queue) => queue.name).sort()).toEqual(expect.arrayContaining(Object.values(TASK_QUEUES)))
        await Promise.all(bosses.map((started) => started.stop({ graceful: false, wait: true })))
      } finally {
        await fresh.drop()
      }
    }
  })
})

describe("leader calls", () => {
  /** A process's leader calls on `queue`: serving `handlers` (stopped after the test), or only calling. */
  async function calls(queue: PgBoss, handlers?: CallHandlers): Promise<LeaderCalls> {
    const made = new LeaderCalls(queue, await link(), log)
    if (!handlers) await made.start()
    else {
      await made.serve(handlers)
      closers.push(() => made.stop())
    }
    return made
  }

  it("returns the leader's answer, and a tool error as a tool error the model reads", async () => {
    const queue = await boss()
    const caller = await calls(queue)
    await calls(queue, {
      double: async (n: number) => n * 2,
      refuse: async () => {
        throw new ToolError("Several tasks start with 01AB: give more of the id.")
      },
      crash: async () => {
        throw new Error("disk full")
      },
    })
    expect(await caller.call<number>("double", [21])).toBe(42)
    await expect(caller.call("refuse", [])).rejects.toThrow(ToolError)
    await expect(caller.call("refuse", [])).rejects.toThrow("Several tasks start with 01AB")
    const crash = caller.call("crash", [])
    await expect(crash).rejects.toThrow("disk full")
    await expect(crash).rejects.not.toBeInstanceOf(ToolError)
  })

  it("answers calls while more calls than its slots wait for a user (approvals have slots of their own)", { timeout: 30_000 }, async () => {
    const queue = await boss()
    const caller = await calls(queue)
    const holds: Array<() => void> = []
    await calls(queue, { hold: () => new Promise<void>((resolve) => holds.push(resolve)), double: async (n: number) => n * 2 })
    const held = Array.from({ length: 70 }, () => caller.call("hold", [], { waitsForUser: true }))
    await waitFor(() => holds.length === 70, 20_000)
    expect(await caller.call<number>("double", [2])).toBe(4)
    holds.forEach((release) => release())
    await Promise.all(held)
  })

  it("hands a call in hand back to the queue when its leader stops, and the next leader answers it", { timeout: 30_000 }, async () => {
    const queue = await boss()
    const caller = await calls(queue)
    let taken = 0
    const first: LeaderCalls = await calls(queue, { approve: () => new Promise((_, reject) => (taken++, first.stopSignal.addEventListener("abort", () => reject(first.stopSignal.reason)))) })
    const answer = caller.call<string>("approve", [], { waitsForUser: true })
    await waitFor(() => taken === 1, 10_000)
    await first.stop()
    await calls(queue, { approve: async () => "Allow" })
    expect(await answer).toBe("Allow")
  })

  it("takes over at once the calls a leader that died had in hand, not at their expiry", { timeout: 30_000 }, async () => {
    const queue = await boss()
    const caller = await calls(queue)
    // A leader that takes the call and is never heard of again (killed): nothing fails its job,
    // nor is it stopped after the test.
    let taken = 0
    await new LeaderCalls(queue, await link(), log).serve({ delegate: () => new Promise(() => void taken++) })
    const answer = caller.call<string>("delegate", [], { expireSeconds: 600 })
    await waitFor(() => taken === 1, 10_000)
    const started = Date.now()
    await calls(queue, { delegate: async () => "staged" })
    expect(await answer).toBe("staged")
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it("gives up waiting after waitMs and leaves the call queued for a leader to come", async () => {
    const queue = await boss()
    const caller = await calls(queue)
    expect(await caller.call("later", ["x"], { waitMs: 100 })).toBeUndefined()
    const taken: unknown[] = []
    await calls(queue, { later: async (value: string) => void taken.push(value) })
    await waitFor(() => taken.length === 1, 5000)
    expect(taken).toEqual(["x"])
  })
})
