import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client"
import type { ChannelHealth } from "../channel/channel.ts"
import type { WorkObserver } from "../core/types.ts"
import type { ModelCallSink, ModelUsage } from "../model/model.ts"
import { stewardVersion } from "../version/version.ts"

/** What the gauges read when /metrics is scraped: the running process's own state. */
export interface MetricSources {
  /** Tasks waiting to run, by role (planner, worker). */
  queueDepth(): Promise<Record<string, number>>
  /** Messages written to the outbox and not yet delivered or failed. */
  outboxBacklog(): Promise<number>
  channels(): Array<{ name: string; health: ChannelHealth }>
}

export type TurnOutcome = "completed" | "failed"
export type FiringOutcome = "fired" | "ran" | "delivered" | "failed" | "skipped"

/**
 * Steward's Prometheus metrics. Counters are incremented where the thing happens (the model
 * layer counts calls and tokens); gauges are read from MetricSources at scrape time, so they
 * cost nothing between scrapes.
 */
export class Metrics implements ModelCallSink, WorkObserver {
  readonly registry = new Registry()
  /** Teller turns run, by how they ended. */
  readonly turns = new Counter<"outcome">({ name: "steward_turns_total", help: "Teller turns run, by outcome", labelNames: ["outcome"], registers: [this.registry] })
  readonly modelCalls = new Counter<"role" | "outcome">({ name: "steward_model_calls_total", help: "Model calls, by role and outcome (ok, error)", labelNames: ["role", "outcome"], registers: [this.registry] })
  readonly modelTokens = new Counter<"role" | "kind">({
    name: "steward_model_tokens_total",
    help: "Model tokens, by role and kind: input (all, cached included), cached_input (read from the provider's cache), output",
    labelNames: ["role", "kind"],
    registers: [this.registry],
  })
  readonly triggerFirings = new Counter<"outcome">({ name: "steward_trigger_firings_total", help: "Trigger firings, by outcome", labelNames: ["outcome"], registers: [this.registry] })
  /** Platform events delivered again and ignored. */
  readonly dedupeHits = new Counter({ name: "steward_dedupe_hits_total", help: "Platform events delivered again and ignored", registers: [this.registry] })

  constructor() {
    // The process's own: CPU, resident memory, heap, event-loop lag, open handles, start time.
    collectDefaultMetrics({ register: this.registry })
    // Which version answers, as Prometheus convention has it: a constant 1 labelled with it.
    new Gauge<"version">({ name: "steward_build_info", help: "Steward's version (the value is always 1)", labelNames: ["version"], registers: [this.registry] }).set({ version: stewardVersion() }, 1)
  }

  turnEnded(outcome: TurnOutcome): void {
    this.turns.inc({ outcome })
  }

  duplicateIgnored(): void {
    this.dedupeHits.inc()
  }

  firingReached(status: FiringOutcome): void {
    this.triggerFirings.inc({ outcome: status })
  }

  modelCall(role: string, outcome: "ok" | "error", usage?: ModelUsage): void {
    this.modelCalls.inc({ role, outcome })
    if (!usage) return
    if (usage.input) this.modelTokens.inc({ role, kind: "input" }, usage.input)
    if (usage.cachedInput) this.modelTokens.inc({ role, kind: "cached_input" }, usage.cachedInput)
    if (usage.output) this.modelTokens.inc({ role, kind: "output" }, usage.output)
  }

  /** Registers the gauges that read the running app's state. */
  watch(sources: MetricSources): void {
    const registers = [this.registry]
    new Gauge<"role">({
      name: "steward_task_queue_depth",
      help: "Tasks queued and waiting to run, by role",
      labelNames: ["role"],
      registers,
      async collect() {
        const depth = await sources.queueDepth()
        for (const role of ["planner", "worker"]) this.set({ role }, depth[role] ?? 0)
      },
    })
    new Gauge({
      name: "steward_outbox_backlog",
      help: "Messages in the outbox not yet delivered",
      registers,
      async collect() {
        this.set(await sources.outboxBacklog())
      },
    })
    new Gauge<"channel">({
      name: "steward_channel_up",
      help: "1 when the channel is connected to its platform",
      labelNames: ["channel"],
      registers,
      collect() {
        for (const { name, health } of sources.channels()) this.set({ channel: name }, health.ok ? 1 : 0)
      },
    })
    // A counter whose value the adapters keep: set from their count at each scrape.
    new Counter<"channel">({
      name: "steward_channel_reconnects_total",
      help: "Times a channel's connection to its platform was lost and came back",
      labelNames: ["channel"],
      registers,
      collect() {
        this.reset()
        for (const { name, health } of sources.channels()) this.inc({ channel: name }, health.reconnects)
      },
    })
  }
}
