import type { Command } from "commander"
import { TERMINAL, type TaskRecord } from "../core/types.ts"
import { ownerTasks, ownerTaskTree, type TaskTree } from "../owner/queries.ts"
import { CliError, clip, print, resolveId, table, when, withStore } from "./common.ts"
import { requestControl } from "./control.ts"

function duration(task: TaskRecord): string {
  if (!task.startedAt) return "-"
  const ms = Date.parse(task.endedAt ?? new Date().toISOString()) - Date.parse(task.startedAt)
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`
}

function treeLines(node: TaskTree, depth = 0): string[] {
  const t = node.task
  const line = `${"  ".repeat(depth)}${depth ? "└ " : ""}${t.id}  ${t.agent}  ${t.status}  created ${when(t.createdAt)}  ran ${duration(t)}${t.attempts > 1 ? `  attempts ${t.attempts}` : ""}  ${clip(t.prompt, 60)}${t.error ? `\n${"  ".repeat(depth + 2)}error: ${clip(t.error, 100)}` : ""}`
  return [line, ...node.children.flatMap((child) => treeLines(child, depth + 1))]
}

export function registerTasks(program: Command): void {
  program
    .command("tasks")
    .description("list queued and running tasks (--all: ended ones too)")
    .option("--all", "include completed, failed, cancelled and timed-out tasks")
    .option("--user <channel:id>", "only this user's tasks")
    .action(async (options: { all?: boolean; user?: string }, command: Command) => {
      const shown = await withStore((store) => ownerTasks(store, options))
      print(command, shown, () =>
        shown.length === 0
          ? "no tasks\n"
          : table(["id", "status", "agent", "user", "created", "ran", "prompt"], shown.map((t) => [t.id, t.status, t.agent, t.user, when(t.createdAt), duration(t), clip(t.prompt, 50)])),
      )
    })

  const task = program
    .command("task")
    .argument("<id>")
    .description("a task and the tree of tasks it started, with states and timings (task cancel <id>: stop it)")
    .action(async (prefix: string, _options: unknown, command: Command) => {
      const tree = await withStore((store) => ownerTaskTree(store, (ids) => resolveId(ids, prefix, "task")))
      if (!tree) throw new CliError(`no task ${prefix}`)
      print(command, tree, () => `${treeLines(tree).join("\n")}\n`)
    })
  task
    .command("cancel <id>")
    .description("stop a queued or running task and the tasks it started; it ends cancelled (the running Steward applies it)")
    .action(async (prefix: string, _options: unknown, command: Command) => {
      const outcome = await withStore(async (store) => {
        const tree = await ownerTaskTree(store, (ids) => resolveId(ids, prefix, "task"))
        if (!tree) throw new CliError(`no task ${prefix}`)
        const { id, status } = tree.task
        if (TERMINAL.has(status) && tree.children.every((child) => TERMINAL.has(child.task.status))) throw new CliError(`task ${id} has already ended (${status})`)
        return { id, result: await requestControl(store, "task.cancel", id) }
      })
      print(command, outcome, () => `${outcome.result}\n`)
    })
}
