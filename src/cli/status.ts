import type { Command } from "commander"
import { chatChannels, dataDirOf } from "../config/config.ts"
import { lockState } from "../lock/data-dir-lock.ts"
import { mcpHealthFile, readHealthFile } from "../mcp/health-file.ts"
import { ownerStatus } from "../owner/queries.ts"
import { CliError, clip, config, print, table, when, withStore } from "./common.ts"

const NEXT_TRIGGERS = 5
const LAST_ERRORS = 5

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description("whether Steward runs, its channels, queues, next schedules, unsent messages and last errors")
    .action(async (_options: unknown, command: Command) => {
      const dataDir = dataDirOf()
      let leaseMs = 15_000
      try {
        leaseMs = config().cluster.leaseSeconds * 1000
      } catch {
        // A configuration error is reported under channels; the default lease judges liveness.
      }
      const lock = await lockState(dataDir)
      let channels: string[] | { error: string }
      try {
        channels = chatChannels(config())
      } catch (error) {
        channels = { error: (error as CliError).message }
      }
      const report = await withStore(async (store) => {
        const owner = await ownerStatus(store, { leaseMs, nextTriggers: NEXT_TRIGGERS, lastErrors: LAST_ERRORS })
        return {
          running: lock.state === "held" || owner.processes.some((p) => p.alive),
          processes: owner.processes,
          pid: lock.state === "free" ? undefined : lock.pid,
          staleLock: lock.state === "stale",
          dataDir,
          channels,
          queues: owner.queues,
          activeTriggers: owner.activeTriggers,
          pausedTriggers: owner.pausedTriggers,
          nextTriggers: owner.nextTriggers,
          outboxBacklog: owner.outboxBacklog,
          pendingControls: owner.pendingControls,
          lastErrors: owner.lastErrors,
          // As the running process last wrote them; nothing when Steward is not running.
          mcp: lock.state === "held" || owner.processes.some((p) => p.alive) ? readHealthFile(mcpHealthFile(dataDir)) : [],
        }
      })
      print(command, report, () => {
        const lines = [
          report.processes.length
            ? `Steward runs in ${report.processes.filter((p) => p.alive).length} of ${report.processes.length} processes on one store`
            : report.running
              ? `Steward is running (pid ${report.pid ?? "unknown"})`
              : `Steward is not running${report.staleLock ? ` (a stale lock of pid ${report.pid ?? "unknown"} is left; start-up takes it over)` : ""}`,
          `data folder: ${report.dataDir}`,
          `channels:    ${Array.isArray(report.channels) ? report.channels.join(", ") : `configuration error: ${report.channels.error}`}`,
          `queues:      ${Object.entries(report.queues).map(([role, q]) => `${role} ${q.queued} queued, ${q.running} running`).join("; ")}`,
          `schedules:   ${report.activeTriggers} active${report.pausedTriggers ? `, ${report.pausedTriggers} paused` : ""}`,
          `outbox:      ${report.outboxBacklog} unsent`,
          ...(report.pendingControls ? [`controls:    ${report.pendingControls} waiting for Steward to apply them`] : []),
          ...(report.mcp.length ? [`mcp:         ${report.mcp.map((s) => `${s.name} ${s.state} (${s.tools} tools)`).join(", ")}`] : []),
        ]
        const processes = report.processes.length
          ? `\nprocesses:\n${table(["process", "role", "state", "last seen", "running"], report.processes.map((p) => [p.id, p.leader ? "leader" : "follower", p.alive ? "alive" : "dead", when(p.seenAt), p.running.map((r) => `${r.taskId} (${r.agent})`).join(", ") || "-"]))}`
          : ""
        const next = report.nextTriggers.length ? `\nnext runs:\n${table(["id", "at", "prompt"], report.nextTriggers.map((t) => [t.id, when(t.nextRunAt), clip(t.prompt, 50)]))}` : ""
        const errors = report.lastErrors.length ? `\nlast errors:\n${report.lastErrors.map((e) => `${when(e.at)}  ${clip(e.message + (e.error ? `: ${e.error}` : ""), 120)}\n`).join("")}` : "\nno errors recorded\n"
        return `${lines.join("\n")}\n${processes}${next}${errors}`
      })
    })
}
