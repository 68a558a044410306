import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { Channel } from "../../src/channel/channel.ts"
import { Outbox } from "../../src/channel/outbox.ts"
import type { OutboxRecord } from "../../src/store/records.ts"
import { Store } from "../../src/store/store.ts"
import { eventually, waitFor } from "../support/wait-for.ts"

const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" })

/** A channel that takes every message. */
const channel: Channel = {
  name: "test",
  start: async () => {},
  stop: async () => {},
  edit: async () => {},
  send: async () => ({ messageId: "m1" }),
}

let dir: string
let store: Store

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "steward-outbox-settled-"))
  store = await Store.open(dir)
})
afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("outbox: a delivery and what depends on it", () => {
  it("tells of a delivery before it writes the record delivered: a death between the two leaves a record to send again, not a report its firing never hears of", async () => {
    const told: Array<{ record: OutboxRecord; storedAs: string | undefined }> = []
    const outbox = new Outbox(store, new Map([["test", channel]]), log, {
      settled: async (record) => void told.push({ record, storedAs: (await store.outbox.all()).find((stored) => stored.id === record.id)?.status }),
    })
    try {
      const record = await outbox.add("test:c1", "the scheduled report", "report:1", {}, "trigger-1/firing-1")
      await waitFor(() => told.length === 1)
      expect(told[0]).toMatchObject({ record: { id: record.id, status: "delivered", messageId: "m1", firingId: "trigger-1/firing-1" }, storedAs: "pending" })
      await eventually(async () => (await store.outbox.all())[0]?.status === "delivered", "the record written delivered", 5000)
    } finally {
      await outbox.stop()
    }
  })
})
