import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { Channel } from "../../src/channel/channel.ts"
import { Outbox } from "../../src/channel/outbox.ts"
import type { OutgoingMessage } from "../../src/core/types.ts"
import { Store } from "../../src/store/store.ts"
import { waitFor } from "../support/wait-for.ts"

const log = pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" })
const C1 = "test:c1"

/** A channel whose formatting code throws on some texts, as a renderer out of stack does. */
class RenderingChannel implements Channel {
  readonly name = "test"
  readonly messageLimit = 4000
  readonly attempts: OutgoingMessage[] = []
  readonly posted: OutgoingMessage[] = []
  /** Texts whose formatted form throws; with `plainToo` the plain form throws as well. */
  breaks = (_message: OutgoingMessage): boolean => false
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async edit(_conversation: string, _messageId: string, _message: OutgoingMessage): Promise<void> {}
  async send(_conversation: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    this.attempts.push(message)
    if (this.breaks(message)) throw new RangeError("Maximum call stack size exceeded")
    this.posted.push(message)
    return { messageId: `m${this.posted.length}` }
  }
}

let dir: string
let store: Store
let channel: RenderingChannel
let outbox: Outbox

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "steward-outbox-failures-"))
  store = await Store.open(dir)
  channel = new RenderingChannel()
})

afterEach(async () => {
  await outbox.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const open = (options = {}) => (outbox = new Outbox(store, new Map([["test", channel as Channel]]), log, {}, options))
const stored = async (id: string) => (await store.outbox.all()).find((record) => record.id === id)!

describe("outbox: errors of the adapter's own code", () => {
  it("sends a message whose formatting throws once more as plain text, and goes on with the next", async () => {
    open()
    channel.breaks = (message) => message.text.startsWith(">") && !message.plain
    const nested = await outbox.add(C1, "> ".repeat(5000) + "deep", "turn-1")
    await outbox.add(C1, "next", "turn-2")
    await waitFor(() => channel.posted.length === 2)
    expect(channel.posted.map((message) => [message.text.slice(-4), message.plain])).toEqual([
      ["deep", true],
      ["next", undefined],
    ])
    expect(await stored(nested.id)).toMatchObject({ status: "delivered", attempts: 2, plain: true })
  })

  it("gives up after the plain attempt fails too, tells the user, and never blocks the conversation", async () => {
    open()
    channel.breaks = (message) => message.text === "poison"
    const poison = await outbox.add(C1, "poison", "turn-1")
    await outbox.add(C1, "after", "turn-2")
    await waitFor(() => channel.posted.length === 2)
    expect(channel.attempts.filter((message) => message.text === "poison")).toHaveLength(2)
    expect(await stored(poison.id)).toMatchObject({ status: "failed", attempts: 2, error: "Maximum call stack size exceeded" })
    expect(channel.posted.map((message) => message.text)).toEqual(["after", expect.stringMatching(/could not be shown here because of an error/)])
    expect(outbox.busy).toBe(false)
  })
})

describe("outbox: bounded memory", () => {
  it("keeps no settled record in memory, and still finds an edit's target (read from the store)", async () => {
    open()
    const first = await outbox.add(C1, "question", "q-1")
    for (let i = 0; i < 50; i++) await outbox.add(C1, `reply ${i}`, `turn-${i}`)
    await waitFor(() => channel.posted.length === 51)
    await waitFor(() => !outbox.busy)
    expect(outbox.backlog).toBe(0)
    // An edit of a message evicted from memory is read from the store and edited, not re-sent.
    const edited: string[] = []
    channel.edit = async (_conversation: string, messageId: string) => void edited.push(messageId)
    const edit = outbox.prepare(C1, "question (answered)", "q-1:edit", first.id)
    await store.save({ outbox: [edit] })
    outbox.commit(edit)
    await waitFor(() => edited.length === 1)
    expect(edited).toEqual(["m1"])
  })
})
