/// <reference lib="dom" />
/**
 * The owner console's page script, bundled for the browser into dist/console/console.js. It
 * reads /console/state every POLL_MS and writes it into the tables as text (textContent and
 * SVG attributes only, never markup: what users and models wrote stays text). Buttons POST
 * JSON to the action paths and show the answer.
 */
import type { ConsoleSnapshot, TaskView } from "../snapshot.ts"

const POLL_MS = 2000
let shown = ""

function cell(text: string | number, kind?: string): HTMLTableCellElement {
  const td = document.createElement("td")
  td.textContent = String(text)
  if (kind) td.className = kind
  return td
}

function word(text: string): HTMLTableCellElement {
  const td = document.createElement("td")
  const span = document.createElement("span")
  span.className = `word ${text}`
  span.textContent = text
  td.append(span)
  return td
}

function button(label: string, path: string): HTMLTableCellElement {
  const td = document.createElement("td")
  const b = document.createElement("button")
  b.type = "button"
  b.textContent = label
  b.dataset.action = path
  td.append(b)
  return td
}

/** Replaces a table's rows; an empty list shows `none` across the columns. */
function rows(selector: string, items: HTMLTableCellElement[][], none: string): void {
  const body = document.querySelector(`${selector} tbody`)!
  const columns = document.querySelectorAll(`${selector} thead th`).length
  const trs = items.map((cells) => {
    const tr = document.createElement("tr")
    tr.append(...cells)
    return tr
  })
  if (trs.length === 0) {
    const empty = cell(none, "empty")
    empty.colSpan = columns
    const tr = document.createElement("tr")
    tr.append(empty)
    trs.push(tr)
  }
  body.replaceChildren(...trs)
}

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`
}

const tokens = (n: number) => (n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)} M` : n >= 10_000 ? `${Math.round(n / 1000)} k` : String(n))

const taskRow = (task: TaskView, action: boolean) => [
  cell(task.id, "id"),
  cell(task.agent),
  cell(task.user, "id"),
  cell(task.prompt, "text"),
  cell(duration(task.elapsed), "num"),
  action ? button("Cancel", `/console/tasks/${encodeURIComponent(task.id)}/cancel`) : cell(""),
]

const SVG = "http://www.w3.org/2000/svg"

function svg<K extends keyof SVGElementTagNameMap>(name: K, attributes: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, name)
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value))
  if (text !== undefined) element.textContent = text
  return element
}

/** Tokens per day as bars, input under output: hand-written SVG, one chart needs no library. */
function chart(days: ConsoleSnapshot["usage"]["perDay"]): SVGSVGElement {
  const width = 600
  const height = 170
  const top = 18
  const bottom = 20
  const most = Math.max(1, ...days.map((day) => day.input + day.output))
  const slot = width / Math.max(1, days.length)
  const scale = (n: number) => (n / most) * (height - top - bottom)
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "model tokens per day" })
  root.append(svg("title", {}, "Model tokens per UTC day (input and output)"))
  root.append(svg("text", { x: 0, y: 11, class: "legend" }, `tokens per day (UTC), most ${tokens(most)} · light: input · dark: output`))
  days.forEach((day, i) => {
    const x = i * slot + slot * 0.15
    const w = slot * 0.7
    const inputHeight = scale(day.input)
    const outputHeight = scale(day.output)
    const base = height - bottom
    const bar = svg("g", { "data-day": day.day })
    bar.append(svg("title", {}, `${day.day}: ${day.calls} calls, ${day.input} input, ${day.output} output tokens`))
    bar.append(svg("rect", { x, y: base - inputHeight, width: w, height: inputHeight, class: "input" }))
    bar.append(svg("rect", { x, y: base - inputHeight - outputHeight, width: w, height: outputHeight, class: "output" }))
    bar.append(svg("text", { x: x + w / 2, y: height - 6, "text-anchor": "middle" }, day.day.slice(5)))
    root.append(bar)
  })
  return root
}

function render(state: ConsoleSnapshot): void {
  // The browser's own clock, its zone named: the owner's zone may be another.
  document.getElementById("updated")!.textContent = `updated ${new Date(state.at).toLocaleTimeString(undefined, { timeZoneName: "short" })}`
  rows("#channels", state.channels.map((c) => [cell(c.name), word(c.health), cell(c.reason ?? "", "text")]), "no channels")
  rows("#running", state.running.map((task) => taskRow(task, true)), "nothing running")
  rows("#queued", state.queued.map((task) => taskRow(task, true)), "nothing queued")
  rows("#failures", state.failures.map((f) => [cell(f.id, "id"), cell(f.ended), word(f.status), cell(f.prompt, "text"), cell(f.error, "text")]), "no recent failures")
  document.querySelector("#schedules .zone")!.textContent = `Times in ${state.zone}`
  rows(
    "#schedules",
    state.schedules.map((s) => [
      cell(s.id, "id"),
      cell(s.prompt, "text"),
      cell(s.cadence, "text"),
      cell(s.nextRun ?? "-"),
      (() => {
        const td = word(s.last)
        if (s.lastAt || s.lastError) td.append(document.createTextNode(` ${s.lastAt ?? ""}${s.lastError ? `: ${s.lastError}` : ""}`))
        return td
      })(),
      word(s.state),
      s.state === "paused" ? button("Resume", `/console/schedules/${encodeURIComponent(s.id)}/resume`) : button("Pause", `/console/schedules/${encodeURIComponent(s.id)}/pause`),
    ]),
    "no schedules",
  )
  document.querySelector("#usage .chart")!.replaceChildren(chart(state.usage.perDay))
  const totals = (list: ConsoleSnapshot["usage"]["byUser"]) => list.map((row) => [cell(row.name, "id"), cell(row.calls, "num"), cell(tokens(row.input), "num"), cell(tokens(row.output), "num")])
  rows("#by-user", totals(state.usage.byUser), "no model calls")
  rows("#by-model", totals(state.usage.byModel), "no model calls")
  rows("#mcp", state.mcp.map((m) => [cell(m.name), word(m.state), cell(m.tools, "num")]), "no MCP servers configured")
}

function notice(text: string, error: boolean): void {
  const element = document.getElementById("notice")!
  element.textContent = text
  element.className = error ? "error" : ""
  element.hidden = false
}

async function refresh(): Promise<void> {
  try {
    // The same request as the page's preload (credentials included), so the first one is reused.
    const response = await fetch("/console/state", { credentials: "include" })
    if (response.status === 401) return void location.assign("/login")
    if (!response.ok) throw new Error(`the state answered ${response.status}`)
    const text = await response.text()
    if (text !== shown) {
      const first = shown === ""
      shown = text
      render(JSON.parse(text) as ConsoleSnapshot)
      // How long the first render took from the navigation's start (the browser test reads it).
      if (first) performance.mark("console-rendered")
    }
    document.body.dataset.state = "live"
  } catch (error) {
    document.body.dataset.state = "stale"
    document.getElementById("updated")!.textContent = `cannot reach Steward (${error instanceof Error ? error.message : String(error)}); trying again`
  }
}

async function act(target: HTMLButtonElement): Promise<void> {
  target.disabled = true
  try {
    const response = await fetch(target.dataset.action!, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    const answer = (await response.json()) as { result?: string; error?: string }
    notice(answer.result ?? answer.error ?? `answered ${response.status}`, !response.ok)
  } catch (error) {
    notice(`could not reach Steward: ${error instanceof Error ? error.message : String(error)}`, true)
  } finally {
    target.disabled = false
    await refresh()
  }
}

document.addEventListener("click", (event) => {
  const target = event.target
  if (target instanceof HTMLButtonElement && target.dataset.action) void act(target)
})

let next: ReturnType<typeof setTimeout> | undefined
let reading = false

/** One poll after another, never two at once, and none while the tab is hidden: a tab left open
 *  in the background reads nothing; shown again, it reads at once. */
async function poll(): Promise<void> {
  clearTimeout(next)
  next = undefined
  if (reading || document.hidden) return
  reading = true
  try {
    await refresh()
  } finally {
    reading = false
  }
  if (!document.hidden) next = setTimeout(() => void poll(), POLL_MS)
}
document.addEventListener("visibilitychange", () => void poll())
void poll()
