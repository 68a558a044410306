import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, describe, expect, it } from "vitest"
import { startApp, type App } from "../../src/app.ts"
import { startAdmin } from "../../src/admin/admin.ts"
import { ClusterLink } from "../../src/cluster/link.ts"
import { Metrics } from "../../src/admin/metrics.ts"
import { newId } from "../../src/store/ids.ts"
import { Store } from "../../src/store/store.ts"
import { newTask, sessionOf } from "../../src/supervisor/task-records.ts"
import { loadConfig, type Config } from "../../src/config/config.ts"
import { startModelServer, type ModelServer, type Script } from "../fakes/model-server.ts"
import { chain, replying } from "../support/e2e.ts"
import { ListMemory, TestChannel } from "../support/harness.ts"
import { freshDatabase, type FreshDatabase } from "../support/pg.ts"
import { waitFor } from "../support/wait-for.ts"

/** Steward processes in this test process, on one Postgres and one data folder. */
interface Node {
  app: App
  config: Config
  channel: TestChannel
  fatal: Error[]
}

let db: FreshDatabase | undefined
let server: ModelServer | undefined
let dataDir: string | undefined
let nodes: Node[] = []

afterEach(async () => {
  for (const node of nodes) await node.app.stop().catch(() => {})
  nodes = []
  await server?.close()
  await db?.drop()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  server = db = dataDir = undefined
})

async function cluster(script: Script, count: number, env: Record<string, string> = {}, before?: (store: Store) => Promise<void>): Promise<Node[]> {
  db = await freshDatabase()
  server = await startModelServer(script)
  dataDir = mkdtempSync(join(tmpdir(), "steward-cluster-"))
  if (before) {
    const store = await Store.open(dataDir, db.url)
    await before(store)
    await store.close()
  }
  const memory = new ListMemory()
  for (let i = 0; i < count; i++) nodes.push(await startNode(memory, env))
  return nodes
}

/** Like Telegram's polling: one process at a time may run it; not connected until started. */
class PollingChannel extends TestChannel {
  readonly exclusive = true
  started = false
  override async start(handlers: Parameters<TestChannel["start"]>[0]): Promise<void> {
    this.started = true
    await super.start(handlers)
  }
  health() {
    return this.started ? { ok: true, reconnects: 0 } : { ok: false, reason: "not connected yet", reconnects: 0 }
  }
}

/** Records whether it was told to clear what an earlier run left shown, and when it did. */
class TidyChannel extends TestChannel {
  startedWith: boolean | undefined
  tidied = 0
  override async start(handlers: Parameters<TestChannel["start"]>[0]): Promise<void> {
    this.startedWith = handlers.tidy
    await super.start(handlers)
  }
  async tidy(): Promise<void> {
    this.tidied++
  }
}

async function startNode(memory: ListMemory, env: Record<string, string> = {}, channel: TestChannel = new TestChannel()): Promise<Node> {
  const config = loadConfig({ DATA_DIR: dataDir!, STORE_URL: db!.url, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server!.url, MODEL_MAX_RETRIES: "1", CLUSTER_LEASE_SECONDS: "1", WORKER_CONCURRENCY: "2", ...env })
  config.allowedUsers = { anyone: false, users: new Set(["test:u1"]) }
  const fatal: Error[] = []
  const app = await startApp(config, pino({ level: process.env.STEWARD_TEST_LOG ?? "silent" }), [channel], memory, undefined, { onFatal: (error) => fatal.push(error) })
  return { app, channel, fatal, config }
}

/** Waits for an asynchronous condition (a store read), checked every 20 ms. */
async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const leaders = () => nodes.filter((node) => node.app.cluster!.leads)
const allSent = () => nodes.flatMap((node) => node.channel.sent)

/** A Worker that takes `ms` and answers with the prompt it was given. */
const slowEcho = (ms: number): Script => async (req) => {
  await new Promise((resolve) => setTimeout(resolve, ms))
  return { text: `echo ${req.lastUserText}` }
}

describe("several processes on one Postgres", () => {
  it("elects one leader, spreads tasks over every process and answers each message once", { timeout: 60_000 }, async () => {
    await cluster(chain(slowEcho(150)), 3)
    await waitFor(() => leaders().length === 1, 10_000)
    const conversations = Array.from({ length: 18 }, (_, i) => `test:c${i}`)
    // Messages reach any process (a load balancer in front of Slack's events): the leader takes them.
    await Promise.all(conversations.map((conversation, i) => nodes[i % 3]!.channel.say(`job ${i}`, conversation)))
    await waitFor(() => allSent().length >= conversations.length, 30_000)
    await leaders()[0]!.app.supervisor.idle()
    for (const [i, conversation] of conversations.entries()) expect(allSent().filter((m) => m.conversation === conversation).map((m) => m.text)).toEqual([`Result: echo job ${i}`])
    // Only the leader's channel sends.
    expect(nodes.filter((node) => node.channel.sent.length > 0)).toEqual(leaders())
    const store = nodes[0]!.app.store
    const tasks = await store.tasks()
    expect(tasks.filter((task) => task.role === "worker")).toHaveLength(conversations.length)
    expect(tasks.every((task) => task.status === "completed" && task.attempts === 1)).toBe(true)
    // Every process ran some of them (WORKER_CONCURRENCY 2 each: 18 tasks of 150 ms cannot all fit in one).
    const holders = new Set<string>()
    for (const task of tasks) holders.add((await store.cluster.claim(`${task.id}:1`))!.holder)
    expect(holders.size).toBe(3)
    expect(nodes.flatMap((node) => node.fatal)).toEqual([])
  })

  it("hands the lead over when the leader stops: work under way elsewhere ends once, its result is delivered by the next leader", { timeout: 60_000 }, async () => {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const worker: Script = async (req) => {
      await released
      return { text: `echo ${req.lastUserText}` }
    }
    await cluster(chain(worker), 3)
    await waitFor(() => leaders().length === 1, 10_000)
    const leader = leaders()[0]!
    await nodes.find((node) => node !== leader)!.channel.say("long job")
    // The worker runs (somewhere); then the leader goes away.
    await eventually(async () => (await leader.app.store.tasks()).some((task) => task.role === "worker" && task.status === "running"), 10_000)
    await leader.app.stop()
    nodes = nodes.filter((node) => node !== leader)
    await waitFor(() => leaders().length === 1, 10_000)
    release()
    await waitFor(() => allSent().length >= 1, 20_000)
    await leaders()[0]!.app.supervisor.idle()
    expect(allSent().map((m) => m.text)).toEqual(["Result: echo long job"])
    const tasks = await nodes[0]!.app.store.tasks()
    expect(tasks.filter((task) => task.role === "worker").map((task) => task.status)).toEqual(["completed"])
  })

  it("runs a task again, as a new attempt, as soon as the process that held it is gone, and reports it once (a second interruption is not yet too many in a cluster)", async () => {
    const task = { ...newTask({ conversation: "test:c1", user: "test:u1", sessionId: newId() }, "test:recover", "worker", "default"), prompt: "recover me" }
    // Its first run's process died too (the run before this one).
    const running = { ...task, status: "running" as const, attempts: 2, runs: 2, startedAt: new Date().toISOString() }
    // A long lease: the holder's heartbeat is fresh, but its connection (its process lock) is gone.
    await cluster(chain(slowEcho(0)), 1, { CLUSTER_LEASE_SECONDS: "60" }, async (store) => {
      await store.save({ tasks: [running], sessions: [sessionOf(task)] })
      // Its holder claimed it and was killed a moment ago.
      await store.cluster.saveClaim({ id: `${task.id}:2`, taskId: task.id, run: 2, holder: "gone:1:dead", startedAt: running.startedAt, status: "running" })
      await store.cluster.saveProcess({ id: "gone:1:dead", host: "gone", pid: 1, startedAt: running.startedAt, seenAt: new Date().toISOString(), leader: false, running: [{ taskId: task.id, run: 2, agent: "default", conversation: "test:c1" }] })
    })
    await waitFor(() => allSent().length >= 1, 10_000)
    await nodes[0]!.app.supervisor.idle()
    expect(allSent().map((m) => m.text)).toEqual(["Result: echo recover me"])
    const store = nodes[0]!.app.store
    expect(await store.task(task.id)).toMatchObject({ status: "completed", attempts: 3, runs: 3 })
    expect(await store.cluster.claim(`${task.id}:3`)).toMatchObject({ status: "done", holder: nodes[0]!.app.cluster!.membership.id })
  })

  it("takes a message with a file that reached a process which does not lead: the leader saves the file", async () => {
    await cluster(replying("got it"), 2)
    await waitFor(() => leaders().length === 1, 10_000)
    const follower = nodes.find((node) => !node.app.cluster!.leads)!
    const attachment = { name: "notes.txt", kind: "document" as const, mimeType: "text/plain", download: async () => new TextEncoder().encode("the quarterly numbers") }
    await follower.channel.say("see the file", "test:c1", "test:u1", { attachments: [attachment], eventId: "test:ev1" })
    // The same platform event delivered again (to another process) is taken once.
    await leaders()[0]!.channel.say("see the file", "test:c1", "test:u1", { attachments: [attachment], eventId: "test:ev1" })
    await waitFor(() => allSent().length >= 1, 10_000)
    await leaders()[0]!.app.supervisor.idle()
    expect(allSent().map((m) => m.text)).toEqual(["got it"])
    const saved = readdirSync(join(dataDir!, "workspace"), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile() && entry.name === "notes.txt")
    expect(saved).toHaveLength(1)
    expect(readFileSync(join(saved[0]!.parentPath, saved[0]!.name), "utf8")).toBe("the quarterly numbers")
    // What was downloaded for the hand-over is gone once the leader took it.
    expect(readdirSync(join(dataDir!, "inbound"))).toEqual([])
  })

  it("starts a channel only one process may run in the leader alone, and a process without it stays healthy", async () => {
    await cluster(replying("hi"), 0)
    const memory = new ListMemory()
    const polling = [new PollingChannel(), new PollingChannel()]
    nodes.push(await startNode(memory, { ADMIN_PORT: "0" }, polling[0]), await startNode(memory, { ADMIN_PORT: "0" }, polling[1]))
    await waitFor(() => leaders().length === 1 && polling.some((channel) => channel.started), 10_000)
    const leaderAt = nodes.indexOf(leaders()[0]!)
    expect(polling.map((channel) => channel.started)).toEqual([leaderAt === 0, leaderAt === 1])
    const follower = nodes[1 - leaderAt]!
    const admin = await startAdmin(follower.config, follower.app, [polling[1 - leaderAt]!], new Metrics(), pino({ level: "silent" }))
    try {
      const health = await fetch(`http://127.0.0.1:${admin!.port}/healthz`)
      expect(health.status).toBe(200)
    } finally {
      await admin!.server.stop()
    }
  })

  it("times a task out where it runs, and a /stop reaches the run in whichever process holds it", { timeout: 30_000 }, async () => {
    // Workers hang until their request is aborted; WORKER_TIMEOUT is 2 s.
    await cluster(chain(() => ({ hang: true })), 2, { WORKER_TIMEOUT: "2", WORKER_CONCURRENCY: "1" })
    await waitFor(() => leaders().length === 1, 10_000)
    const store = nodes[0]!.app.store
    const workerOf = async (conversation: string) => (await store.tasks()).find((task) => task.role === "worker" && task.conversation === conversation)
    await nodes[0]!.channel.say("slow one", "test:c1")
    await waitFor(() => allSent().some((m) => m.conversation === "test:c1"), 15_000)
    expect(await workerOf("test:c1")).toMatchObject({ status: "timed_out", error: "timed out after 2 s" })

    await nodes[1]!.channel.say("stop me", "test:c2")
    await eventually(async () => (await workerOf("test:c2"))?.status === "running", 10_000)
    const running = (await workerOf("test:c2"))!
    await eventually(async () => (await store.cluster.claim(`${running.id}:1`)) !== undefined, 10_000)
    // Its model request is under way (the run checks the user's quota first).
    await waitFor(() => server!.requests.filter((req) => req.role === "worker").length === 2, 10_000)
    await nodes[0]!.channel.say("/stop", "test:c2")
    expect(await workerOf("test:c2")).toMatchObject({ status: "cancelled" })
    // The run itself ends where it ran: its model request is aborted and its claim closed.
    await eventually(async () => (await store.cluster.claim(`${running.id}:1`))?.status === "failed", 5000)
    expect(server!.requests.filter((req) => req.role === "worker")).toHaveLength(2)
  })

  it("settles a run whose task was cancelled before it was handed over (no abort event comes then)", async () => {
    await cluster(replying("hi"), 1)
    await waitFor(() => leaders().length === 1, 10_000)
    const controller = new AbortController()
    controller.abort(new Error("cancelled before it was queued"))
    const task = { ...newTask({ conversation: "test:c1", user: "test:u1", sessionId: newId() }, "test:aborted", "worker", "default"), status: "running" as const, attempts: 1, runs: 1 }
    await expect(nodes[0]!.app.cluster!.runTask(task, controller.signal, () => {})).rejects.toThrow("cancelled before it was queued")
  })

  it("lets a process that stops gracefully finish the tasks it runs, taking no new ones", async () => {
    await cluster(chain(slowEcho(300)), 2)
    await waitFor(() => leaders().length === 1, 10_000)
    const leader = leaders()[0]!
    const follower = nodes.find((node) => node !== leader)!
    // Only the follower claims tasks here.
    leader.app.cluster!.stopClaiming()
    await leader.channel.say("finish me")
    const store = leader.app.store
    const worker = async () => (await store.tasks()).find((task) => task.role === "worker")
    await eventually(async () => (await worker())?.status === "running", 10_000)
    const id = (await worker())!.id
    await eventually(async () => (await store.cluster.claim(`${id}:1`)) !== undefined, 10_000)
    await follower.app.stopInput()
    await follower.app.idle()
    expect(await store.cluster.claim(`${id}:1`)).toMatchObject({ status: "done", holder: follower.app.cluster!.membership.id })
    await follower.app.stop()
    nodes = nodes.filter((node) => node !== follower)
    await waitFor(() => allSent().length >= 1, 10_000)
    expect(allSent().map((m) => m.text)).toEqual(["Result: echo finish me"])
    expect(await worker()).toMatchObject({ status: "completed", attempts: 1 })
  })

  it("does not take a process for dead because its clock is behind: a beat counts when it changes", { timeout: 20_000 }, async () => {
    const task = { ...newTask({ conversation: "test:c1", user: "test:u1", sessionId: newId() }, "test:skewed", "worker", "default"), prompt: "slow elsewhere" }
    const startedAt = new Date().toISOString()
    const running = { ...task, status: "running" as const, attempts: 1, runs: 1, startedAt }
    const holder = "skewed:1:clock"
    // A process on a machine whose clock is an hour behind: connected, beating.
    const beat = (store: Store) => store.cluster.saveProcess({ id: holder, host: "skewed", pid: 1, startedAt, seenAt: new Date(Date.now() - 3600_000).toISOString(), leader: false, running: [{ taskId: task.id, run: 1, agent: "default", conversation: "test:c1" }] })
    let other: ClusterLink | undefined
    await cluster(chain(slowEcho(0)), 1, {}, async (store) => {
      await store.save({ tasks: [running], sessions: [sessionOf(task)] })
      await store.cluster.saveClaim({ id: `${task.id}:1`, taskId: task.id, run: 1, holder, startedAt, status: "running" })
      await beat(store)
      other = await ClusterLink.connect(db!.url, pino({ level: "silent" }), () => {})
      await other.holdProcessLock(holder)
    })
    const store = nodes[0]!.app.store
    try {
      // Three leases of beats, each an hour old by the leader's clock.
      for (let i = 0; i < 12; i++) {
        await beat(store)
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      expect(await store.task(task.id)).toMatchObject({ status: "running", runs: 1 })
      await store.cluster.saveClaim({ id: `${task.id}:1`, taskId: task.id, run: 1, holder, startedAt, status: "done", result: "echo slow elsewhere", endedAt: new Date().toISOString() })
      await waitFor(() => allSent().length >= 1, 10_000)
      expect(allSent().map((m) => m.text)).toEqual(["Result: echo slow elsewhere"])
    } finally {
      await other?.close()
    }
  })

  it("leaves what the leader shows alone in a process that does not lead, and clears a stopped leader's leftovers when it takes over", async () => {
    await cluster(replying("hi"), 0)
    const memory = new ListMemory()
    const shown = [new TidyChannel(), new TidyChannel()]
    nodes.push(await startNode(memory, {}, shown[0]), await startNode(memory, {}, shown[1]))
    await waitFor(() => leaders().length === 1 && shown.some((channel) => channel.tidied === 1), 10_000)
    expect(shown.map((channel) => channel.startedWith)).toEqual([false, false])
    const leaderAt = nodes.indexOf(leaders()[0]!)
    expect(shown.map((channel) => channel.tidied)).toEqual([leaderAt === 0 ? 1 : 0, leaderAt === 1 ? 1 : 0])
    await nodes[leaderAt]!.app.stop()
    nodes = nodes.filter((_, i) => i !== leaderAt)
    await waitFor(() => shown[1 - leaderAt]!.tidied === 1, 10_000)
  })
})
