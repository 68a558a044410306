import type { ProgressUpdate, ToolSummary } from "../../src/core/types.ts"

/** The status shows the latest tool calls; older ones scroll off. */
const SHOWN_TOOLS = 8
const MAX_TOOL_TITLE = 200

const ICONS: Record<ToolSummary["status"], string> = { running: "…", completed: "✓", error: "✗" }
const ENDED: Record<NonNullable<ProgressUpdate["outcome"]>, string> = { done: "Done", stopped: "Stopped", failed: "Failed" }

/** One line per recent tool call, its title passed through `escape` for the platform's markup. */
export const toolLines = (update: ProgressUpdate, escape: (text: string) => string = (text) => text) =>
  update.tools.slice(-SHOWN_TOOLS).map((tool) => `${ICONS[tool.status]} ${escape((tool.title ?? tool.tool).slice(0, MAX_TOOL_TITLE))}`)

/** Seconds under a minute, then whole minutes: past the first minute the text — and so the
 *  message — changes once a minute, well inside the platforms' edit limits however long it runs. */
export function elapsedText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** What the work is (its title, else who does it) and where it stands: "Working for 12 s", "Stopped after 2 min". */
export function statusHead(update: ProgressUpdate, elapsed: string): { title: string; state: string } {
  const state = update.state === "done" ? `${ENDED[update.outcome ?? "done"]} after ${elapsed}` : `Working for ${elapsed}`
  return { title: update.title ?? `${update.agent} is working`, state }
}
