/**
 * A year of state: a data folder with 100,000 ended tasks, 200,000 delivered outbox records and
 * 50,000 trigger firings (plus a little live work), then a cold start of Steward on it in a
 * fresh process: `cold_start_year_ms` from opening the store to the Supervisor started, and
 * `rss_year_mb` once it is.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { FiringRecord, TaskRecord, TriggerRecord } from "../src/core/types.ts"
import type { OutboxRecord } from "../src/store/records.ts"
import { Store } from "../src/store/store.ts"
import { Figures } from "./figures.ts"

const TASKS = 100_000
const OUTBOX = 200_000
const FIRINGS = 50_000
const TRIGGERS = 50
const CONVERSATIONS = 500
const BATCH = 2000
const YEAR_MS = 365 * 86_400_000
const T0 = Date.parse("2025-01-01T00:00:00Z")

const conversation = (i: number) => `telegram:${1000 + (i % CONVERSATIONS)}`
const id = (prefix: string, i: number) => `${prefix}${String(i).padStart(22, "0")}`
const spread = (i: number, of: number) => new Date(T0 + (i / of) * YEAR_MS).toISOString()

function task(i: number): TaskRecord {
  const at = spread(i, TASKS)
  const where = conversation(i)
  return {
    id: id("TASK", i),
    role: "worker",
    agent: "general",
    type: "oneshot",
    prompt: `look up item ${i} and summarise what changed since last week`,
    priority: 5,
    timeout: null,
    status: "completed",
    conversation: where,
    user: where,
    parentSessionId: id("TELL", i % CONVERSATIONS),
    sessionId: id("SESS", i),
    origin: `${id("TELL", i % CONVERSATIONS)}:call${i}`,
    attempts: 1,
    createdAt: at,
    startedAt: at,
    endedAt: at,
    result: "a summary of a few hundred characters ".repeat(8),
    reported: true,
  }
}

function reply(i: number): OutboxRecord {
  return { id: id("OUTB", i), origin: `${id("TELL", i % CONVERSATIONS)}:reply${i}`, conversation: conversation(i), text: "a reply of moderate length ".repeat(6), status: "delivered", attempts: 1, createdAt: spread(i, OUTBOX), messageId: String(i) }
}

function trigger(t: number): TriggerRecord {
  const active = t < 10
  const where = conversation(t)
  return { id: id("TRIG", t), conversation: where, user: where, kind: "recurring", prompt: "check the build", interval: 600, cooldown: 0, timeout: null, onMissed: "run-once", maxLateness: 3600, status: active ? "active" : "ended", nextRunAt: active ? "2099-01-01T00:00:00.000Z" : undefined, createdAt: spread(0, 1), origin: `PLAN:schedule${t}` }
}

function firing(i: number): FiringRecord {
  const triggerId = id("TRIG", i % TRIGGERS)
  const at = spread(i, FIRINGS)
  return { id: `${triggerId}/${id("FIRE", i)}`, triggerId, scheduledFor: at, at, outcome: "fired", status: "delivered", taskId: id("TASK", i), messageId: String(i) }
}

/** Writes the year in batches, and a little live work: queued tasks and unsent replies. */
export async function buildYear(dataDir: string): Promise<void> {
  const store = await Store.open(dataDir)
  const batches = <T>(count: number, make: (i: number) => T, save: (records: T[]) => Promise<void>) =>
    (async () => {
      for (let from = 0; from < count; from += BATCH) await save(Array.from({ length: Math.min(BATCH, count - from) }, (_, k) => make(from + k)))
    })()
  await batches(TASKS, task, (tasks) => store.save({ tasks }))
  await batches(OUTBOX, reply, (outbox) => store.save({ outbox }))
  await store.save({ triggers: Array.from({ length: TRIGGERS }, (_, t) => trigger(t)) })
  await batches(FIRINGS, firing, (firings) => store.save({ firings }))
  const live = Array.from({ length: 10 }, (_, i) => ({ ...task(TASKS + i), status: "queued" as const, attempts: 0, startedAt: undefined, endedAt: undefined, result: undefined, reported: undefined }))
  await store.save({ tasks: live, outbox: Array.from({ length: 5 }, (_, i) => ({ ...reply(OUTBOX + i), status: "pending" as const, attempts: 0, messageId: undefined })) })
  await store.close()
}

export async function runYearBench(figures: Figures): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "steward-year-"))
  try {
    await buildYear(dataDir)
    // A fresh process, so the start-up's memory is measured alone.
    const output = execFileSync(process.execPath, ["--import", "tsx", new URL("./year-start.ts", import.meta.url).pathname, dataDir], { encoding: "utf8" })
    const { ms, rssMb } = JSON.parse(output.trim().split("\n").at(-1)!) as { ms: number; rssMb: number }
    figures.add("cold_start_year_ms", ms, "ms", "<= 1000")
    figures.add("rss_year_mb", rssMb, "MB", "<= 200")
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runYearBench(new Figures(process.argv.includes("--json")))
