import pino from "pino"
import { describe, expect, it } from "vitest"
import { startBoss, TASK_QUEUES } from "../../src/cluster/queues.ts"
import { freshDatabase } from "../support/pg.ts"

describe("the job queues", () => {
  it("are created once when three processes start at once on a fresh database (no deadlock ends one of them)", { timeout: 60_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const db = await freshDatabase()
      try {
        const started = await Promise.allSettled([0, 1, 2].map(() => startBoss(db.url, 1, pino({ level: "silent" }))))
        const bosses = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []))
        expect(started.flatMap((result) => (result.status === "rejected" ? [String(result.reason)] : []))).toEqual([])
        expect((await bosses[0]!.getQueues()).map((queue) => queue.name).sort()).toEqual(expect.arrayContaining(Object.values(TASK_QUEUES)))
        await Promise.all(bosses.map((boss) => boss.stop({ graceful: false, wait: true })))
      } finally {
        await db.drop()
      }
    }
  })
})
