/**
 * Issue 14 items 6-10 through the real Supervisor, store and AI SDK provider, with a scripted
 * model server on 127.0.0.1 (test/support/harness.ts). The platform adapters' part (Slack's
 * user zone, Telegram commands, forget with real memory files) is in test/e2e/daily.test.ts.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { FiringRecord, TriggerRecord } from "../../src/core/types.ts"
import { byRole, type ChatRequest, type Reply } from "../fakes/model-server.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { afterTool, envText, systemText, recorded, say } from "../support/scripts.ts"
import { waitFor } from "../support/wait-for.ts"

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

/** Each request's system text (the instructions, then memory.md as long-lived context). */
const systemOf = (h: Harness, role: string) => h.server.requests.filter((r) => r.role === role).map(systemText)
/** Each request's newest environment block: it rides on the newest input, not the system prompt. */
const envOf = (h: Harness, role: string) => h.server.requests.filter((r) => r.role === role).map(envText)
const triggers = (h: Harness): Promise<TriggerRecord[]> => h.app.store.schedules.triggers()
const firingsOf = async (h: Harness, id: string): Promise<FiringRecord[]> => h.app.store.schedules.firingsOf(id)
const texts = (h: Harness) => h.channel.sent.map((m) => m.text)
/** Says `text` and resolves with the answer it got (the next message sent). */
async function ask(h: Harness, text: string): Promise<string> {
  const before = h.channel.sent.length
  await h.channel.say(text)
  await h.channel.waitForSent(before + 1)
  return h.channel.sent[before]!.text
}

/** A Teller that hands each message to the Planner and passes each report on. */
function delegatingTeller(req: ChatRequest): Reply {
  if (afterTool(req)) return { text: "" }
  if (req.lastUserText.includes("<task-results>")) return say(`report: ${/status="(\w+)">\nPrompt: ([^\n]*)/.exec(req.lastUserText)?.[2]}`)
  return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
}

/** A Planner that makes the tool call `args` builds from the user's text, then finishes. */
function plannerCalling(name: string, args: (text: string) => Record<string, unknown>) {
  return (req: ChatRequest): Reply => (afterTool(req) ? { text: `planned: ${req.lastToolResults[0]!.content}` } : { toolCalls: [{ name, args: args(req.lastUserText) }] })
}

describe("per-user time zones", () => {
  it("/timezone shows the DEFAULT_TIMEZONE fallback, sets a valid zone for the agents' date, refuses a bad one, and keeps it across a restart", async () => {
    harness = await startHarness(byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say("hi")) }), { DEFAULT_TIMEZONE: "America/New_York" })
    expect(await ask(harness, "/timezone")).toBe("Your time zone is America/New_York (Steward's default). Set it with /timezone <IANA name>, e.g. /timezone Europe/Berlin.")
    await ask(harness, "hello")
    expect(envOf(harness, "teller").at(-1)).toMatch(/Current time: .+ \(time zone America\/New_York; ISO \S+[+-]0[45]:00\)/)
    expect(await ask(harness, "/timezone Mars/Olympus_Mons")).toMatch(/^Could not set the time zone: "Mars\/Olympus_Mons" is not an IANA time zone name/)
    expect(await ask(harness, "/timezone asia/tokyo")).toMatch(/^Your time zone is now Asia\/Tokyo; it is .+ \(Asia\/Tokyo\) there\./)
    await ask(harness, "hello again")
    expect(envOf(harness, "teller").at(-1)).toMatch(/\(time zone Asia\/Tokyo; ISO \S+\+09:00\)/)
    await harness.restart({ graceful: true })
    expect(await ask(harness, "/timezone")).toMatch(/^Your time zone is Asia\/Tokyo \(set by you\)/)
  })

  it("takes the zone the platform reports, unless the user chose one", async () => {
    harness = await startHarness(byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say("hi")) }))
    await harness.channel.say("hello", "test:c1", "test:u1", { timezone: "Asia/Kolkata" })
    await harness.channel.waitForSent(1)
    expect(envOf(harness, "teller").at(-1)).toMatch(/time zone Asia\/Kolkata; ISO \S+\+05:30/)
    expect(await ask(harness, "/timezone")).toMatch(/Asia\/Kolkata \(from your chat profile\)/)
    await ask(harness, "/timezone Europe/Berlin")
    await harness.channel.say("hello", "test:c1", "test:u1", { timezone: "Asia/Kolkata" })
    await harness.channel.waitForSent(4)
    expect(envOf(harness, "teller").at(-1)).toContain("time zone Europe/Berlin")
  })

  it("stores the zone the user tells the Teller (set_timezone); a cron without a zone is read in it and /tasks shows the next run there", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return req.lastToolResults[0]!.toolName === "set_timezone" ? say(`zone: ${req.lastToolResults[0]!.content}`) : { text: "" }
          if (req.lastUserText === "I live in Tokyo") return { toolCalls: [{ name: "set_timezone", args: { timeZone: "Asia/Tokyo" } }] }
          return delegatingTeller(req)
        },
        planner: plannerCalling("schedule", () => ({ prompt: "morning digest", type: "recurring", cron: "0 9 * * *" })),
      }),
    )
    expect(await ask(harness, "I live in Tokyo")).toBe('zone: {"timeZone":"Asia/Tokyo"}')
    await ask(harness, "every morning at 9")
    const [trigger] = await triggers(harness)
    expect(trigger!.timezone).toBe("Asia/Tokyo")
    expect(new Date(trigger!.nextRunAt!).getUTCHours()).toBe(0) // 09:00 in Tokyo
    const listing = await ask(harness, "/tasks")
    expect(listing).toMatch(/↳ next run \w{3}, \d+ \w{3} \d{4}, 09:00 \(Asia\/Tokyo\)/)
  })
})

describe("quiet triggers", () => {
  it("posts nothing for a run that answers NO_REPORT and records it on the firing as ran, nothing to report", async () => {
    const worker = recorded(() => ({ text: "NO_REPORT" }))
    harness = await startHarness(
      byRole({
        teller: delegatingTeller,
        planner: plannerCalling("schedule", () => ({ prompt: "check the site", type: "scheduled", runAt: new Date(Date.now() + 1500).toISOString(), quiet: true })),
        worker: worker.script,
      }),
    )
    await ask(harness, "tell me if the site is down")
    await harness.app.supervisor.idle()
    const tellerSteps = systemOf(harness, "teller").length
    const [trigger] = await triggers(harness)
    expect(trigger!.quiet).toBe(true)
    await waitFor(() => worker.requests.length > 0, 8000)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect(worker.requests[0]!.lastUserText).toContain("answer exactly NO_REPORT")
    expect(harness.channel.sent).toHaveLength(1) // only the planning report
    expect(await firingsOf(harness, trigger!.id)).toEqual([expect.objectContaining({ status: "ran", nothingToReport: true })])
    expect((await harness.app.store.schedules.trigger(trigger!.id))!.lastOutcome).toBe("ran, nothing to report")
    // The Teller was never woken for it.
    expect(systemOf(harness, "teller")).toHaveLength(tellerSteps)
  })

  it("passes a quiet run's finding through the Teller, which writes the message, recorded as delivered", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return { text: "" }
          if (req.lastUserText.includes("A scheduled run of schedule")) return say(`Heads up — ${/site is down \(\d+\)/.exec(req.lastUserText)?.[0]}. Want me to look closer?`)
          return delegatingTeller(req)
        },
        planner: plannerCalling("schedule", () => ({ prompt: "check the site", type: "scheduled", runAt: new Date(Date.now() + 1500).toISOString(), quiet: true })),
        worker: () => ({ text: "site is down (503)" }),
      }),
    )
    await ask(harness, "tell me if the site is down")
    await harness.channel.waitFor(() => texts(harness!).some((t) => t.startsWith("Heads up")), "the Teller's message", 8000)
    await harness.app.supervisor.idle()
    await harness.app.supervisor.scheduler.settled()
    expect(texts(harness)[1]).toBe("Heads up — site is down (503). Want me to look closer?")
    const [trigger] = await triggers(harness)
    expect(await firingsOf(harness, trigger!.id)).toEqual([expect.objectContaining({ status: "delivered", messageId: harness.channel.sent[1]!.messageId })])
  })
})

describe("pause, resume and edit", () => {
  it("/pause and /resume by id prefix: no run while paused, persisted across a restart, no catch-up on resume; list_tasks shows it", async () => {
    let listed = ""
    const worker = recorded(() => ({ text: "ran" }))
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return req.lastToolResults[0]!.toolName === "list_tasks" ? ((listed = req.lastToolResults[0]!.content), say("listed")) : { text: "" }
          if (req.lastUserText === "list") return { toolCalls: [{ name: "list_tasks", args: { scope: "triggers" } }] }
          return delegatingTeller(req)
        },
        planner: plannerCalling("schedule", () => ({ prompt: "ping", type: "scheduled", runAt: new Date(Date.now() + 2000).toISOString() })),
        worker: worker.script,
      }),
    )
    await ask(harness, "ping me soon")
    const [trigger] = await triggers(harness)
    const prefix = trigger!.id.slice(0, 12).toLowerCase()
    expect(await ask(harness, `/pause ${prefix}`)).toBe(`Paused ${trigger!.id}: it will not run until you /resume it.`)
    expect(await ask(harness, `/pause ${prefix}`)).toBe(`Could not pause: schedule ${trigger!.id} is already paused.`)
    await ask(harness, "list")
    expect(JSON.parse(listed).tasks).toEqual([expect.objectContaining({ id: trigger!.id, type: "trigger:scheduled", status: "paused", paused: true })])
    expect(await ask(harness, "/tasks")).toContain(`• ${trigger!.id} — schedule (scheduled), paused, last none yet: ping`)
    await harness.restart({ graceful: true })
    // Its time passes while paused (and while Steward was restarted): nothing runs.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(trigger!.runAt!) + 300 - Date.now())))
    expect(worker.requests).toHaveLength(0)
    expect((await harness.app.store.schedules.trigger(trigger!.id))!.status).toBe("paused")
    expect(await ask(harness, `/resume ${prefix}`)).toBe(`${trigger!.id} ended: its time passed while it was paused.`)
    await harness.app.supervisor.idle()
    expect(worker.requests).toHaveLength(0)
    expect(await firingsOf(harness, trigger!.id)).toEqual([])
  })

  it("/resume of a recurring trigger waits for its next due time from now", async () => {
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: plannerCalling("schedule", () => ({ prompt: "hourly", type: "recurring", interval: 3600 })) }))
    await ask(harness, "every hour")
    const [trigger] = await triggers(harness)
    await ask(harness, `/pause ${trigger!.id}`)
    expect((await harness.app.store.schedules.trigger(trigger!.id))!.nextRunAt).toBeUndefined()
    expect(await ask(harness, `/resume ${trigger!.id.slice(0, 20)}`)).toMatch(new RegExp(`^Resumed ${trigger!.id}: next run .+\\. Runs missed while paused are not caught up\\.$`))
    const resumed = (await harness.app.store.schedules.trigger(trigger!.id))!
    expect(resumed).toMatchObject({ status: "active", nextRunAt: trigger!.nextRunAt })
  })

  it("the Planner's schedule with triggerId (a prefix) changes the prompt and cadence in place, keeping id and history", async () => {
    let step = 0
    harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) || req.lastUserText.includes("<task-results>") ? delegatingTeller(req) : ((step += 1), delegatingTeller(req))),
        planner: plannerCalling("schedule", (text) =>
          text === "first"
            ? { prompt: "old prompt", type: "scheduled", runAt: new Date(Date.now() + 3600_000).toISOString() }
            : { prompt: "new prompt", type: "scheduled", runAt: new Date(Date.now() + 1500).toISOString(), triggerId: text.slice("edit ".length) },
        ),
        worker: (req) => ({ text: `did: ${req.lastUserText}` }),
      }),
    )
    await ask(harness, "first")
    const [created] = await triggers(harness)
    await ask(harness, `edit ${created!.id.slice(0, 14)}`)
    await harness.channel.waitFor(() => texts(harness!).includes("report: new prompt"), "the edited run's report", 8000)
    const all = await triggers(harness)
    expect(all).toHaveLength(1)
    expect(all[0]).toMatchObject({ id: created!.id, prompt: "new prompt", createdAt: created!.createdAt })
    expect(await firingsOf(harness, created!.id)).toHaveLength(1)
    expect(step).toBe(2)
  })

  it("refuses an ambiguous id prefix with a clear message", async () => {
    harness = await startHarness(byRole({ teller: delegatingTeller, planner: plannerCalling("schedule", (text) => ({ prompt: text, type: "recurring", interval: 3600 })) }))
    await ask(harness, "one")
    await ask(harness, "two")
    const [a, b] = await triggers(harness)
    let common = 0
    while (a!.id[common] === b!.id[common]) common++
    const prefix = a!.id.slice(0, Math.max(4, common))
    expect(await ask(harness, `/cancel ${prefix}`)).toMatch(new RegExp(`^"${prefix}" is ambiguous: it starts 2 ids \\(.+\\); give more characters$`))
    expect(await ask(harness, `/pause ${prefix}`)).toMatch(/^Could not pause: ".+" is ambiguous/)
    expect(await ask(harness, `/cancel ${a!.id.slice(0, common + 1)}`)).toBe(`Cancelled ${a!.id}.`)
  })
})

describe("/stop", () => {
  it("ends the Teller's turn and every task of the conversation with its children, at once and without a report", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => {
          if (afterTool(req)) return { text: "" }
          if (req.lastUserText === "think hard") return { hang: true }
          return { toolCalls: [{ name: "reply", args: { text: "On it." } }, { name: "delegate", args: { prompt: req.lastUserText } }] }
        },
        planner: (req) => (afterTool(req) ? { hang: true } : { toolCalls: [{ name: "delegate", args: { prompt: "w" } }] }),
      }),
    )
    const { channel, server } = harness
    await channel.say("big job")
    await channel.waitForSent(1)
    await server.waitForRequests(server.requests.length + 2) // the planner's step and the one that hangs
    await channel.say("think hard")
    await server.waitForRequests(server.requests.length + 1)
    const [planner] = harness.app.supervisor.tasks.openIn("test:c1")
    const stopped = await ask(harness, "/stop")
    expect(stopped).toBe(`Stopped the reply I was writing and 1 task (${planner!.id}). Schedules stay; /pause one to hold it.`)
    await harness.app.supervisor.idle()
    expect((await harness.app.store.task(planner!.id))!.status).toBe("cancelled")
    // Nothing after the answer to /stop: no apology, no cancelled report.
    expect(texts(harness)).toEqual(["On it.", stopped])
    expect(await ask(harness, "/stop")).toBe("Nothing is running here.")
  })
})

describe("/stop after the Planner finished", () => {
  it("stops the workers it committed, and the ended batch wakes nobody", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) ? { text: "" } : req.lastUserText.includes("<task-results>") ? say("results came") : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
        planner: (req) => (afterTool(req) ? { text: "dispatched" } : { toolCalls: [{ name: "delegate", args: { prompt: "slow" } }] }),
        worker: () => ({ hang: true }),
      }),
    )
    await harness.channel.say("big job")
    const board = harness.app.supervisor.tasks
    const worker = await waitFor(() => board.openIn("test:c1").find((task) => task.role === "worker" && task.status === "running"), 8000)
    expect(await ask(harness, "/stop")).toBe(`Stopped 1 task (${worker.id}). Schedules stay; /pause one to hold it.`)
    await harness.app.supervisor.idle()
    expect((await harness.app.store.task(worker.id))!.status).toBe("cancelled")
    expect(texts(harness)).toHaveLength(1)
  })
})

describe("memory.md in the prompt", () => {
  it("is in the Teller's and Planner's system prompt after the role instructions, not the Worker's, and follows the note", async () => {
    harness = await startHarness(
      byRole({
        teller: (req) => (afterTool(req) ? { text: "" } : req.lastUserText.includes("<task-results>") ? say("done") : { toolCalls: [{ name: "delegate", args: { prompt: "p" } }] }),
        planner: (req) => (afterTool(req) ? { text: "ok" } : { toolCalls: [{ name: "delegate", args: { prompt: "w" } }] }),
        worker: () => ({ text: "ok" }),
      }),
    )
    const folder = harness.memory.folder("test:u1")
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, "memory.md"), "## 2026-03-01\n\nThe user lives in Berlin and prefers short answers.\n")
    await ask(harness, "go")
    await harness.app.supervisor.idle()
    for (const role of ["teller", "planner"]) {
      const system = systemOf(harness, role)[0]!
      // The notes are a model's words: in an envelope (src/trust/envelope.ts), data to the model.
      expect(system).toMatch(/\n\n<memory>\n[^\n]+\n<untrusted-content source="memory.md" boundary="[0-9a-f]{16}">\n## 2026-03-01\n\nThe user lives in Berlin and prefers short answers.\n<\/untrusted-content boundary="[0-9a-f]{16}">\n<\/memory>$/)
      expect(system.indexOf("\n<memory>\n")).toBeGreaterThan(system.indexOf("# Role:"))
    }
    expect(systemOf(harness, "worker")[0]).not.toContain("\n<memory>\n")
    writeFileSync(join(folder, "memory.md"), "## 2026-03-02\n\nThe user lives in Munich.\n")
    await ask(harness, "again")
    expect(systemOf(harness, "teller").at(-1)).toContain("The user lives in Munich.")
  })
})
