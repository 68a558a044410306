import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterEach, describe, expect, it, vi } from "vitest"
import type { FiringRecord } from "../../src/core/types.ts"
import { Store, type StoredRecords } from "../../src/store/store.ts"
import { byRole, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, recorded, say } from "../support/scripts.ts"

const execFileAsync = promisify(execFile)

let harness: Harness | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await harness?.close()
  harness = undefined
})

const HOOKS_TOKEN = "hooks-token-0123456789"

/** A Teller that delegates every user message and replies with each report it is woken with. */
function reportingTeller(req: ChatRequest): Reply {
  if (afterTool(req)) return { text: "" }
  if (req.lastUserText.includes("<task-results>")) return say(`report: ${[...req.lastUserText.matchAll(/status="(\w+)">\nPrompt: ([^\n]*)/g)].map((m) => `${m[2]}=${m[1]}`).join(", ")}`)
  return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
}

/** A Planner that makes one tool call (built from the request), then finishes. */
function plannerCalling(name: string, args: () => Record<string, unknown>) {
  return (req: ChatRequest): Reply => (afterTool(req) ? { text: `planned: ${req.lastToolResults[0]!.content}` } : { toolCalls: [{ name, args: args() }] })
}

const firings = async (h: Harness): Promise<FiringRecord[]> => (await Promise.all((await h.app.store.schedules.triggers()).map((t) => h.app.store.schedules.firingsOf(t.id)))).flat()

describe("schedules end to end", () => {
  it("runs a one-shot schedule a moment ahead and delivers its report once, recorded on the firing", async () => {
    const worker = recorded(() => ({ text: "the kettle is boiling" }))
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: plannerCalling("schedule", () => ({ prompt: "check the kettle", type: "scheduled", runAt: new Date(Date.now() + 1500).toISOString() })),
        worker: worker.script,
      }),
    )
    const { channel } = harness
    await channel.say("remind me")
    await channel.waitForSent(1) // the planning batch's report
    expect(worker.requests).toHaveLength(0)
    await channel.waitFor(() => channel.sent.some((m) => m.text === "report: check the kettle=completed"), "the scheduled report", 8000)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect(channel.sent).toHaveLength(2)
    const [firing] = await firings(harness)
    expect(firing).toMatchObject({ outcome: "fired", status: "delivered", messageId: channel.sent[1]!.messageId })
    // A scheduled trigger ends once it fired: nothing is left to list.
    await channel.say("/tasks")
    await channel.waitForSent(3)
    expect(channel.sent[2]!.text).toMatch(/no schedules/)
  })

  it("keeps a schedule across a crash: the report arrives once after the restart", async () => {
    const worker = recorded(() => ({ text: "reminded" }))
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: plannerCalling("schedule", () => ({ prompt: "stretch", type: "scheduled", runAt: new Date(Date.now() + 1500).toISOString() })),
        worker: worker.script,
      }),
    )
    await harness.channel.say("remind me to stretch")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    await harness.restart() // a crash before the due time
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "report: stretch=completed"), "the report", 8000)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect(harness.channel.sent).toHaveLength(1)
    expect(worker.requests).toHaveLength(1)
    expect(await firings(harness)).toHaveLength(1)
  })

  it("keeps the time a Planner was asked for when its run is repeated after a crash: a runAt that passed meanwhile still reminds, at once", async () => {
    // The Planner's first run hangs in its model call; Steward dies; it comes back after runAt.
    const runAt = new Date(Date.now() + 1000).toISOString()
    let release!: () => void
    const hung = new Promise<void>((resolve) => (release = resolve))
    let calledOnce!: () => void
    const firstCall = new Promise<void>((resolve) => (calledOnce = resolve))
    let plannerCalls = 0
    const worker = recorded(() => ({ text: "reminded" }))
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: async (req) => {
          if (afterTool(req)) return { text: `planned: ${req.lastToolResults[0]!.content}` }
          if (++plannerCalls === 1) {
            calledOnce()
            await hung
          }
          return { toolCalls: [{ name: "schedule", args: { prompt: "stretch", type: "scheduled", runAt } }] }
        },
        worker: worker.script,
      }),
    )
    await harness.channel.say("remind me to stretch in a second")
    await firstCall
    // Down until runAt has passed: a wait for the clock itself.
    await harness.restart({ whileDown: () => new Promise((resolve) => setTimeout(resolve, Date.parse(runAt) + 200 - Date.now())) })
    release()
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "report: stretch=completed"), "the late reminder", 10_000)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect(plannerCalls).toBe(2)
    expect(worker.requests).toHaveLength(1)
    expect(await firings(harness)).toMatchObject([{ outcome: "fired", status: "delivered" }])
  })

  it("relays a scheduled report once when Steward died between the Teller's reply and its message: the replayed reply is the report", async () => {
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: plannerCalling("schedule", () => ({ prompt: "stretch", type: "scheduled", runAt: new Date(Date.now() + 1000).toISOString() })),
        worker: () => ({ text: "stretched" }),
      }),
    )
    const save = Store.prototype.save
    let crash!: () => void
    const crashed = new Promise<void>((resolve) => (crash = resolve))
    // The death: the reply's message to the scheduled report never reaches the disk, nor anything after.
    let dead = false
    const spy = vi.spyOn(Store.prototype, "save").mockImplementation(function (this: Store, records: Partial<StoredRecords>) {
      dead ||= records.outbox?.some((record) => record.text === "report: stretch=completed") === true
      if (!dead) return save.call(this, records)
      crash()
      return Promise.reject(new Error("SIGKILL"))
    })
    await harness.channel.say("remind me to stretch")
    await crashed
    harness.channel.failures = Number.POSITIVE_INFINITY
    await harness.restart({ whileDown: async () => spy.mockRestore() })
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text === "report: stretch=completed"), "the report", 8000)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect(harness.channel.sent.map((m) => m.text).filter((text) => text.includes("stretch"))).toEqual(["report: stretch=completed"])
    expect(await firings(harness)).toMatchObject([{ status: "delivered" }])
  })

  it("posts a scheduled report even when the Teller says nothing about it", async () => {
    let first = true
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (first) {
            first = false
            return { toolCalls: [{ name: "delegate", args: { prompt: "plan" } }] }
          }
          return { text: "" } // silent on every report
        },
        planner: plannerCalling("schedule", () => ({ prompt: "water the plants", type: "scheduled", runAt: new Date(Date.now() + 1000).toISOString() })),
        worker: () => ({ text: "plants watered" }),
      }),
    )
    await harness.channel.say("go")
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text.includes("plants watered")), "the fallback report", 8000)
    expect(harness.channel.sent.filter((m) => m.text.includes("water the plants"))).toHaveLength(1)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect((await firings(harness))[0]).toMatchObject({ status: "delivered" })
  })

  it("lists a recurring schedule with its next run and removes it with /cancel", async () => {
    harness = await startHarness(
      byRole({ teller: reportingTeller, planner: plannerCalling("schedule", () => ({ prompt: "daily digest", type: "recurring", cron: "0 9 * * *", timezone: "Europe/Berlin" })) }),
    )
    const { channel } = harness
    await channel.say("every morning")
    await channel.waitForSent(1)
    await channel.say("/tasks")
    await channel.waitForSent(2)
    const id = /• (\S+) — schedule \(recurring\), next (\S+), last none yet: daily digest/.exec(channel.sent[1]!.text)
    expect(id).not.toBeNull()
    expect(new Date(id![2]!).getUTCMinutes()).toBe(0)
    await channel.say(`/cancel ${id![1]}`)
    await channel.say("/tasks")
    await channel.waitForSent(4)
    expect(channel.sent[2]!.text).toBe(`Cancelled ${id![1]}.`)
    expect(channel.sent[3]!.text).toMatch(/no schedules/)
  })

  it("shows triggers to list_tasks (scope triggers and all) and removes one with cancel_task", async () => {
    const listings: string[] = []
    const teller = (req: ChatRequest): Reply => {
      const [result] = afterTool(req) ? req.lastToolResults : []
      if (req.lastUserText === "what is scheduled?") {
        if (!result) return { toolCalls: [{ name: "list_tasks", args: { scope: "triggers" } }, { name: "list_tasks", args: { scope: "all" } }, { name: "list_tasks", args: { scope: "queue" } }] }
        if (result.toolName === "list_tasks") {
          listings.push(...req.lastToolResults.map((r) => r.content))
          return { toolCalls: [{ name: "cancel_task", args: { taskId: JSON.parse(result.content).tasks[0].id } }] }
        }
        return result.toolName === "cancel_task" ? say(`cancel: ${result.content}`) : { text: "" }
      }
      return reportingTeller(req)
    }
    harness = await startHarness(byRole({ teller, planner: plannerCalling("schedule", () => ({ prompt: "daily digest", type: "recurring", interval: 3600 })) }))
    const { channel } = harness
    await channel.say("every hour")
    await channel.waitForSent(1)
    await harness.app.supervisor.idle()
    await channel.say("what is scheduled?")
    expect((await channel.waitForSent(2))[1]!.text).toBe('cancel: {"success":true}')
    const [triggers, all, queue] = listings.map((l) => JSON.parse(l).tasks as Array<Record<string, unknown>>)
    expect(triggers).toEqual([expect.objectContaining({ type: "trigger:recurring", prompt: "daily digest", status: "active", nextRunAt: expect.any(String) })])
    expect(all).toEqual(triggers) // the planning task has ended; "all" lists what is queued, running or scheduled
    expect(queue).toEqual([])
    expect(harness.app.supervisor.scheduler.list("test:c1")).toEqual([])
  })

  it("posts a run's report to its target, and tells the owner when that run failed", async () => {
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: plannerCalling("schedule", () => ({ prompt: "check the site", type: "scheduled", runAt: new Date(Date.now() + 1000).toISOString(), target: "test:c2" })),
        worker: () => ({ error: { status: 400, message: "the worker broke" } }),
      }),
    )
    const { channel } = harness
    await channel.say("watch the site")
    await channel.waitForSent(1, "test:c1")
    const [report] = await channel.waitForSent(1, "test:c2", 8000)
    expect(report!.text).toBe("report: check the site=failed")
    const notice = (await channel.waitForSent(2, "test:c1", 5000))[1]!
    expect(notice.text).toMatch(/^A run of the schedule \S+ \(“check the site”\) failed: the run ended failed\. Its report went to test:c2\.$/)
  })

  it("lets only an owner send reports to a conversation that is not the user's own", async () => {
    harness = await startHarness(byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say("hi")) }), { ALLOWED_USERS: "*" })
    await harness.channel.say("hello", "test:c1", "test:u1")
    await harness.channel.say("hello", "test:c9", "test:u9")
    await harness.channel.waitForSent(2)
    const ctx = (callId: string) => ({ role: "planner" as const, agent: "planner", conversation: "test:c9", user: "test:u9", sessionId: "s9", callId, abort: new AbortController().signal })
    const request = (target: string) => ({ prompt: "digest", type: "recurring" as const, interval: 3600, target })
    await expect(harness.app.supervisor.schedules.schedule(ctx("a"), request("test:c1"))).rejects.toThrow('target "test:c1" is not a conversation of yours')
    await expect(harness.app.supervisor.schedules.schedule(ctx("b"), request("test:c404"))).rejects.toThrow("is not a conversation of yours")
    await expect(harness.app.supervisor.schedules.schedule(ctx("c"), request("test:c9"))).resolves.toMatchObject({ taskId: expect.any(String) })
  })

  it("refuses a report target that is not a conversation of a running channel", async () => {
    const planner = recorded(plannerCalling("schedule", () => ({ prompt: "x", type: "recurring", interval: 3600, target: "nowhere:C1" })))
    harness = await startHarness(byRole({ teller: reportingTeller, planner: planner.script }))
    await harness.channel.say("schedule it elsewhere")
    await harness.channel.waitForSent(1)
    await harness.app.supervisor.idle()
    expect(planner.requests[1]!.lastToolResults[0]!.content).toMatch(/target "nowhere:C1" is not a conversation of a running channel/)
  })
})

describe("conditional tasks end to end", () => {
  /** A Planner that delegates `first`, then a conditional task on it (built from first's id). */
  function plannerWithCondition(first: string, second: string, status?: string) {
    return (req: ChatRequest): Reply => {
      const results = req.lastToolResults
      if (results.length === 0) return { toolCalls: [{ name: "delegate", args: { prompt: first } }] }
      const taskId = /"taskId":"([^"]+)"/.exec(results[0]!.content)?.[1]
      if (req.messages.filter((m) => m.role === "tool").length === 1) {
        return { toolCalls: [{ name: "delegate", args: { prompt: second, type: "conditional", condition: { kind: "task", taskId, ...(status ? { status } : {}) } } }] }
      }
      return { text: "planned" }
    }
  }

  it("runs a conditional task after the task it waits for, and reports it on its own", async () => {
    const order: string[] = []
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: plannerWithCondition("bake the bread", "slice the bread"),
        worker: (req) => {
          order.push(req.lastUserText)
          return { text: `done: ${req.lastUserText}` }
        },
      }),
    )
    const { channel } = harness
    await channel.say("make sandwiches")
    await channel.waitForSent(2)
    expect(order).toEqual(["bake the bread", "slice the bread"])
    expect(channel.sent.map((m) => m.text)).toEqual(["report: make sandwiches=completed, bake the bread=completed", "report: slice the bread=completed"])
  })

  it("cancels a conditional task whose condition can never hold, and says why", async () => {
    const order: string[] = []
    harness = await startHarness(
      byRole({
        teller: (req) => {
          const why = /can never hold: (task \S+ ended completed, not failed)/.exec(req.lastUserText)
          return why && !afterTool(req) ? say(`the follow-up was cancelled: ${why[1]}`) : reportingTeller(req)
        },
        planner: plannerWithCondition("try the deploy", "roll back", "failed"),
        worker: (req) => (order.push(req.lastUserText), { text: "deployed fine" }),
      }),
    )
    await harness.channel.say("deploy")
    await harness.channel.waitFor(() => harness!.channel.sent.some((m) => m.text.startsWith("the follow-up was cancelled: task ")), "the cancellation report")
    expect(order).toEqual(["try the deploy"])
  })

  it("runs a task waiting for an event raised over HTTP, and one raised with the CLI", async () => {
    const order: string[] = []
    let planned = 0
    harness = await startHarness(
      byRole({
        teller: reportingTeller,
        planner: (req) =>
          afterTool(req)
            ? { text: "waiting" }
            : { toolCalls: [{ name: "delegate", args: { prompt: `after ${++planned}`, type: "conditional", condition: { kind: "event", name: planned === 1 ? "deploy.done" : "backup_ok" } } }] },
        worker: (req) => (order.push(req.lastUserText), { text: "ok" }),
      }),
      { HOOKS_TOKEN },
    )
    const { channel } = harness
    await channel.say("when deployed")
    await channel.waitForSent(1)
    const hook = (name: string, token = HOOKS_TOKEN) => fetch(`http://127.0.0.1:${harness!.app.hooksPort}/hooks/${name}`, { method: "POST", headers: { authorization: `Bearer ${token}` } })
    expect((await hook("deploy.done", "wrong-token-0123456789")).status).toBe(401)
    expect((await hook("bad name!")).status).toBe(400)
    await harness.app.supervisor.idle()
    expect(order).toEqual([])
    expect((await hook("deploy.done")).status).toBe(202)
    await channel.waitFor(() => channel.sent.some((m) => m.text === "report: after 1=completed"), "the first conditional report")

    await channel.say("when backed up")
    await channel.waitFor(() => channel.sent.length === 3, "the planning report")
    const cli = await execFileAsync(process.execPath, ["dist/cli.js", "event", "backup_ok"], { env: { PATH: process.env.PATH, DATA_DIR: harness.dataDir }, timeout: 20_000 })
    expect(cli.stdout).toBe("raised backup_ok\n")
    await channel.waitFor(() => channel.sent.some((m) => m.text === "report: after 2=completed"), "the second conditional report")
    expect(order).toEqual(["after 1", "after 2"])
  })
})
