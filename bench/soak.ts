/**
 * Soak benchmark: 100,000 Teller turns over 5,000 conversations (20 turns each) with the
 * instant scripted model of the core benchmark, to see whether memory and per-turn cost stay
 * flat as the process runs. Conversations are worked through in lanes, each taking its 20
 * turns before the next conversation starts, so the first and last tenths of the run do the
 * same work (sessions of the same sizes) and differ only in how long the process has run.
 * `SOAK_TURNS` runs a shorter soak (same figure names; the turn count is printed as context).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import pino from "pino"
import { startApp } from "../src/app.ts"
import { loadConfig } from "../src/config/config.ts"
import { BENCH_OWNER, BenchChannel, instantModel } from "./core.ts"
import { noMemory } from "./no-memory.ts"
import { Figures } from "./figures.ts"

const TURNS = Number(process.env.SOAK_TURNS ?? 100_000)
const TURNS_PER_CONVERSATION = 20
/** Conversations worked on at once. */
const LANES = 25

/** RSS after a full collection when the process allows one (`node --expose-gc`, as `npm run
 *  bench` runs): garbage not yet collected is not growth. */
function settledRss(): number {
  ;(globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage().rss
}

export async function runSoakBench(figures: Figures): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "steward-soak-"))
  const config = loadConfig({ DATA_DIR: dataDir, MODEL: "openai-compatible:instant", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", ALLOWED_USERS: BENCH_OWNER })
  const channel = new BenchChannel()
  const model = instantModel()
  const app = await startApp(config, pino({ level: process.env.BENCH_LOG ?? "silent" }, pino.destination(2)), [channel], noMemory, () => model)
  // Two monitors, one before the benchmark's own pause (below) and one after: a monitor turned
  // off and on again measures its first delay from its last tick before the pause, so one
  // monitor would count the pause as a stall after all.
  const monitors = [monitorEventLoopDelay({ resolution: 10 })]
  const stalls = () => monitors.at(-1)!
  const tenth = Math.max(1, Math.floor(TURNS / 10))
  const conversations = Math.ceil(TURNS / TURNS_PER_CONVERSATION)
  let done = 0
  let next = 0
  let rssAfterTenth = 0
  const marks: number[] = []
  const started = performance.now()
  try {
    stalls().enable()
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        for (let c = next++; c < conversations; c = next++) {
          for (let turn = 0; turn < TURNS_PER_CONVERSATION && done < TURNS; turn++) {
            await channel.turn(`bench:soak${c}`, `hello ${turn}`)
            done++
            if (done === tenth) {
              // The full collection is the benchmark's own pause (60–160 ms on a 100–250 MB
              // heap), not Steward's: the loop is not watched while it runs.
              stalls().disable()
              rssAfterTenth = settledRss()
              monitors.push(monitorEventLoopDelay({ resolution: 10 }))
              stalls().enable()
            }
            if (done === tenth || done === TURNS - tenth || done === TURNS) marks.push(performance.now())
          }
        }
      }),
    )
    await app.supervisor.idle()
    stalls().disable()
    const rssGrowth = (settledRss() - rssAfterTenth) / 2 ** 20
    const [firstTenthEnd, lastTenthStart, end] = marks as [number, number, number]
    const firstRate = tenth / ((firstTenthEnd - started) / 1000)
    const lastRate = tenth / ((end - lastTenthStart) / 1000)
    figures.add("soak_turns", TURNS, "turns")
    figures.add("soak_seconds", (performance.now() - started) / 1000, "s")
    figures.add("soak_rss_growth_mb", rssGrowth, "MB", "<= 50")
    figures.add("soak_throughput_ratio", lastRate / firstRate, "ratio", ">= 0.9")
    figures.add("soak_event_loop_max_ms", Math.max(...monitors.map((monitor) => monitor.max)) / 1e6, "ms", "<= 100")
  } finally {
    stalls().disable()
    await app.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runSoakBench(new Figures(process.argv.includes("--json")))
  process.exit(0)
}
