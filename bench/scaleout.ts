/**
 * Scale-out: Steward as real processes (`node dist/main.js`) on one Postgres (started here, in a
 * temporary folder, on a free port) and one DATA_DIR, with a scripted model that takes 200 ms a
 * call and WORKER_CONCURRENCY 4 in every process. Work goes in through the leader's console: a
 * message makes the Teller delegate to many Planners at once, each dispatching a few Workers
 * (small batches: a Planner in a process that does not lead dispatches each Worker by a call to
 * the leader, one after another, so a large batch would starve the Workers of the cluster).
 *
 * - scaleout_speedup_3p: worker tasks completed per second with three processes over one — 200
 *   worker tasks each time (40 Planners of 5), timed from their claims (first run's start to
 *   last run's end); the same cluster, its first process alone, then with two more.
 * - scaleout_claim_p99_ms: from a worker task committed (its createdAt, written when its Planner
 *   succeeds) to its run's start in some process (the claim's startedAt), with three processes
 *   and little work (3 Workers every few hundred ms, far below the 12 slots; the peak is shown):
 *   claiming, not queueing.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { spawnPostgres } from "../scripts/postgres-process.mjs"
import type { TaskRecord } from "../src/core/types.ts"
import type { ClaimRecord } from "../src/store/records.ts"
import { Store } from "../src/store/store.ts"
import { runOf } from "../src/supervisor/task-records.ts"
import { byRole, contentText, startModelServer, type ChatRequest, type Reply, type Script } from "../test/fakes/model-server.ts"
import { StewardProcess } from "../test/support/process.ts"
import type { Figures } from "./figures.ts"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const MODEL_MS = 200
const CONCURRENCY = 4
/** The throughput phases: one message, PLANNERS Planners of WORKERS Workers each. */
const PLANNERS = 40
const WORKERS = 5
/** The claim phase: LATENCY_MESSAGES messages LATENCY_SPACING_MS apart, one Planner of LATENCY_WORKERS Workers each. */
const LATENCY_MESSAGES = 30
const LATENCY_WORKERS = 3
const LATENCY_SPACING_MS = 300
const PHASE_TIMEOUT_MS = 30_000

/** "<tag> <planners>x<workers>" from the user: the Teller acknowledges and delegates to that many Planners. */
const ORDER = /\b(\w+) (\d+)x(\d+)\b/
/** "<tag> p<n> <workers>": a Planner's prompt. */
const PLAN = /\b(\w+) p(\d+) (\d+)\b/

const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
/** What the user (or the Supervisor) said since the model last spoke. */
const newInput = (req: ChatRequest) => req.messages.slice(req.messages.findLastIndex((m) => m.role === "assistant") + 1).filter((m) => m.role === "user").map((m) => contentText(m.content))

function script(): Script {
  const slow =
    (answer: (req: ChatRequest) => Reply): Script =>
    async (req) => {
      await sleep(MODEL_MS)
      return answer(req)
    }
  return byRole({
    teller: slow((req) => {
      const order = afterTool(req) ? undefined : newInput(req).map((text) => ORDER.exec(text)).find((match) => match && !match.input.startsWith("<task-results>"))
      if (!order) return { text: "" }
      const [, tag, planners, workers] = order
      const delegations = Array.from({ length: Number(planners) }, (_, p) => ({ name: "delegate", args: { prompt: `${tag} p${p} ${workers}` } }))
      return { toolCalls: [{ name: "reply", args: { text: `ack ${tag}` } }, ...delegations] }
    }),
    planner: slow((req) => {
      const plan = afterTool(req) ? undefined : PLAN.exec(req.lastUserText)
      if (!plan) return { text: "dispatched" }
      const [, tag, p, workers] = plan
      return { toolCalls: Array.from({ length: Number(workers) }, (_, w) => ({ name: "delegate", args: { prompt: `${tag} p${p} w${w}` } })) }
    }),
    worker: slow(() => ({ text: "done" })),
    // The console's one session grows with every report; now and then it is summed up.
    compaction: slow(() => ({ text: "Orders given, tasks reported." })),
  })
}

interface Run {
  task: TaskRecord
  claim: ClaimRecord
}

/** A Steward cluster on a Postgres of its own, and the store as the bench reads it. */
class Rig {
  readonly processes: StewardProcess[] = []

  constructor(
    private readonly env: Record<string, string>,
    readonly store: Store,
  ) {}

  get leader(): StewardProcess {
    return this.processes[0]!
  }

  /** One more process; resolves once its record is in the store (it claims tasks from then on). */
  async add(): Promise<void> {
    const before = new Set((await this.store.cluster.processes()).map((record) => record.id))
    const steward = StewardProcess.start(this.env)
    this.processes.push(steward)
    await this.until(`process ${this.processes.length} to join`, async () => (await this.store.cluster.processes()).some((record) => !before.has(record.id) && record.pid === steward.child.pid))
  }

  async waitForLeader(): Promise<void> {
    await this.until("a leader", async () => (await this.store.cluster.processes()).some((record) => record.leader && record.pid === this.leader.child.pid))
  }

  /** Sends `<tag> <planners>x<workers>` to the leader's console and waits for the Teller's ack. */
  async order(tag: string, planners: number, workers: number): Promise<void> {
    this.leader.send(`${tag} ${planners}x${workers}`)
    await this.until(`the Teller's ack of ${tag}`, async () => this.leader.replies.includes(`ack ${tag}`))
  }

  /** The runs of the `count` worker tasks whose prompts start with one of `tags`, once all completed. */
  async runs(tags: string[], count: number): Promise<Run[]> {
    const ofPhase = (task: TaskRecord) => task.role === "worker" && tags.includes(task.prompt.split(" ")[0]!)
    let tasks: TaskRecord[] = []
    await this.until(`${count} worker tasks of ${tags.length === 1 ? tags[0] : `${tags[0]}…`}`, async () => {
      tasks = (await this.store.tasks()).filter(ofPhase)
      const failed = tasks.find((task) => task.status === "failed" || task.status === "cancelled")
      if (failed) throw new Error(`worker task ${failed.id} ${failed.status}: ${failed.error ?? ""}`)
      return tasks.length === count && tasks.every((task) => task.status === "completed")
    })
    return Promise.all(
      tasks.map(async (task) => {
        const claim = await this.store.cluster.claim(`${task.id}:${runOf(task)}`)
        if (claim?.status !== "done" || !claim.endedAt) throw new Error(`worker task ${task.id} has no ended claim`)
        return { task, claim }
      }),
    )
  }

  /** Until nothing runs: the Teller's turns for the reports, the last claims' ends. */
  async settle(): Promise<void> {
    await this.until("the cluster to settle", async () => (await this.store.cluster.processes()).every((record) => record.running.length === 0) && (await this.store.tasks()).every((task) => task.status !== "running" && task.status !== "queued"))
    await sleep(4 * MODEL_MS)
  }

  async stop(): Promise<void> {
    // The others first, then the leader (it would hand its lead over otherwise).
    for (const steward of [...this.processes].reverse()) {
      if (steward.child.exitCode !== null) continue
      steward.child.kill("SIGTERM")
      const timer = setTimeout(() => steward.child.kill("SIGKILL"), 10_000)
      await steward.exited
      clearTimeout(timer)
    }
  }

  private async until(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + PHASE_TIMEOUT_MS
    while (!(await check())) {
      const dead = this.processes.find((steward) => steward.child.exitCode !== null)
      if (dead) throw new Error(`a Steward process exited (${dead.child.exitCode}) while waiting for ${what}: ${dead.stderr.join("").slice(-2000)}`)
      if (Date.now() > deadline) throw new Error(`no ${what} within ${PHASE_TIMEOUT_MS} ms; the leader's last replies: ${this.leader.replies.slice(-3).join(" | ").slice(-1000)}`)
      await sleep(50)
    }
  }
}

let began = 0
/** With BENCH_LOG set: when each phase ended, on stderr. */
const trace = (what: string) => process.env.BENCH_LOG && process.stderr.write(`scaleout: ${what} at ${((performance.now() - began) / 1000).toFixed(1)} s\n`)
const ms = (iso: string) => Date.parse(iso)
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** Worker tasks completed per second: from the first run's start to the last run's end. */
function throughput(runs: Run[]): number {
  const first = Math.min(...runs.map((run) => ms(run.claim.startedAt)))
  const last = Math.max(...runs.map((run) => ms(run.claim.endedAt!)))
  return runs.length / ((last - first) / 1000)
}

/** The most worker runs under way at once (of 3 × CONCURRENCY slots): the claim phase must stay below. */
function peakRuns(runs: Run[]): number {
  const edges = runs.flatMap((run) => [[ms(run.claim.startedAt), 1], [ms(run.claim.endedAt!), -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let now = 0
  let peak = 0
  for (const [, step] of edges) peak = Math.max(peak, (now += step))
  return peak
}

export async function runScaleOutBench(figures: Figures): Promise<void> {
  began = performance.now()
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" })
  // Not under a mkdtemp folder: its 0700 would shut out the postgres user when run as root.
  const postgres = await spawnPostgres({ dir: join(tmpdir(), `steward-bench-pg-${randomBytes(6).toString("hex")}`), temporary: true })
  const model = await startModelServer(script())
  const dataDir = mkdtempSync(join(tmpdir(), "steward-bench-scaleout-"))
  const env = { DATA_DIR: dataDir, STORE_URL: postgres.url, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: model.url, MODEL_MAX_RETRIES: "1", WORKER_CONCURRENCY: String(CONCURRENCY) }
  const store = await Store.open(dataDir, postgres.url).catch(async (error: unknown) => {
    await Promise.all([model.close(), postgres.stop()])
    throw error
  })
  const rig = new Rig(env, store)
  try {
    await rig.add()
    await rig.waitForLeader()
    trace("leader up")

    await rig.order("tp1", PLANNERS, WORKERS)
    const one = throughput(await rig.runs(["tp1"], PLANNERS * WORKERS))
    trace("1 process done")
    await rig.settle()

    await rig.add()
    await rig.add()
    trace("3 processes up")
    await rig.order("tp3", PLANNERS, WORKERS)
    const runs3 = await rig.runs(["tp3"], PLANNERS * WORKERS)
    const three = throughput(runs3)
    trace("3 processes done")
    await rig.settle()

    const tags = Array.from({ length: LATENCY_MESSAGES }, (_, i) => `lat${i}`)
    for (const tag of tags) {
      const sent = performance.now()
      await rig.order(tag, 1, LATENCY_WORKERS)
      await sleep(Math.max(0, LATENCY_SPACING_MS - (performance.now() - sent)))
    }
    trace("claims sent")
    const claimed = await rig.runs(tags, LATENCY_MESSAGES * LATENCY_WORKERS)
    const delays = claimed.map((run) => ms(run.claim.startedAt) - ms(run.task.createdAt)).sort((a, b) => a - b)

    figures.add("scaleout_tasks_per_second_1p", one, "tasks/s")
    figures.add("scaleout_tasks_per_second_3p", three, "tasks/s")
    figures.add("scaleout_processes_used_3p", new Set(runs3.map((run) => run.claim.holder)).size, "procs")
    figures.add("scaleout_speedup_3p", three / one, "x", ">= 2.5")
    figures.add("scaleout_claim_p50_ms", percentile(delays, 50), "ms")
    figures.add("scaleout_claim_p99_ms", percentile(delays, 99), "ms", "<= 100")
    figures.add("scaleout_claim_phase_peak_runs", peakRuns(claimed), "runs")
  } finally {
    await rig.stop()
    await store.close()
    await model.close()
    await postgres.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { Figures } = await import("./figures.ts")
  await runScaleOutBench(new Figures(process.argv.includes("--json")))
  process.exit(0)
}
