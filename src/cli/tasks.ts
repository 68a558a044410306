import type { Command } from "commander"
import { TERMINAL, type TaskRecord } from "../core/types.ts"
import { CliError, clip, print, resolveId, table, when, withStore } from "./common.ts"

interface TaskTree {
  task: TaskRecord
  children: TaskTree[]
}

function duration(task: TaskRecord): string {
  if (!task.startedAt) return "-"
  const ms = Date.parse(task.endedAt ?? new Date().toISOString()) - Date.parse(task.startedAt)
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`
}

/** A task and the tasks it committed, and theirs. */
function treeOf(task: TaskRecord, all: TaskRecord[], seen = new Set<string>()): TaskTree {
  seen.add(task.id)
  const children = all.filter((t) => (t.parentTaskId === task.id || task.children?.includes(t.id)) && !seen.has(t.id))
  return { task, children: children.map((child) => treeOf(child, all, seen)) }
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
      const tasks = await withStore(async (store) => (options.all ? await store.tasks() : await store.liveTasks()))
      const shown = tasks.filter((t) => (options.all || !TERMINAL.has(t.status)) && (!options.user || t.user === options.user))
      print(command, shown, () =>
        shown.length === 0
          ? "no tasks\n"
          : table(["id", "status", "agent", "user", "created", "ran", "prompt"], shown.map((t) => [t.id, t.status, t.agent, t.user, when(t.createdAt), duration(t), clip(t.prompt, 50)])),
      )
    })

  program
    .command("task <id>")
    .description("a task and the tree of tasks it started, with states and timings")
    .action(async (prefix: string, _options: unknown, command: Command) => {
      const tree = await withStore(async (store) => {
        const all = await store.tasks()
        const id = resolveId(all.map((t) => t.id), prefix, "task")
        const task = all.find((t) => t.id === id)
        if (!task) throw new CliError(`no task ${prefix}`)
        return treeOf(task, all)
      })
      print(command, tree, () => `${treeLines(tree).join("\n")}\n`)
    })
}
