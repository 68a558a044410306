/**
 * What a user sees and corrects of their memory: the bounded snapshot of memory.md the Teller
 * and Planner are given, `/memory`'s overview, and `forget`, which removes or rewrites notes.
 * Functions of a memory folder (Memory.folder(user)); the search index notices the changed
 * files by their stamps, as it does for hand edits.
 */
import { readFile, unlink, writeFile } from "node:fs/promises"
import path from "node:path"
import { untrusted } from "../trust/envelope.ts"
import { DAILY_FOLDER, LONG_TERM_FILE, listNotes, readChunks } from "./notes.ts"
import { chainsOf, type Chain } from "./supersede.ts"

/** memory.md as the agents see it: at most this many bytes, the newest kept. */
export const SNAPSHOT_BYTES = 8 * 1024
/** /memory's answer stays one chat message. */
const OVERVIEW_CHARS = 3500
const OVERVIEW_NOTES = 5
/** Facts that changed, shown by /memory: the newest changes. */
const OVERVIEW_CHAINS = 5
/** A query shorter than this would match far more than the user meant. */
const MIN_QUERY = 3

/** The newest `bytes` of `text` (UTF-8), starting at a line; `cut` when older lines were left out. */
function newest(text: string, bytes: number): { text: string; cut: boolean } {
  const buffer = Buffer.from(text, "utf8")
  if (buffer.length <= bytes) return { text, cut: false }
  const tail = buffer.subarray(buffer.length - bytes).toString("utf8")
  // From the first whole line: no half line, no broken character.
  return { text: tail.slice(tail.indexOf("\n") + 1), cut: true }
}

/**
 * The user's memory.md for the system prompt (after the role's instructions): what they asked
 * to be remembered for good, bounded to SNAPSHOT_BYTES with the newest entries kept. Empty when
 * there is none. It changes only when the note does, so the prompt stays cacheable.
 */
export async function memorySnapshot(folder: string): Promise<string> {
  const note = (await readIfAny(path.join(folder, LONG_TERM_FILE))).trim()
  if (note === "") return ""
  const { text, cut } = newest(note, SNAPSHOT_BYTES)
  return [
    "<memory>",
    "What this user asked you to remember (memory.md; newest last). Use it; the `forget` tool corrects or removes it.",
    ...(cut ? ["(older entries left out)"] : []),
    // Notes are a model's words (a remember call): data, never instructions.
    untrusted("memory.md", text, { stable: true }),
    "</memory>",
  ].join("\n")
}

/** /memory: memory.md (newest part) and the latest daily notes, as one message. */
export async function memoryOverview(folder: string): Promise<string> {
  const notes = await listNotes(folder)
  const long = (await readIfAny(path.join(folder, LONG_TERM_FILE))).trim()
  const daily = notes.filter((source) => source.startsWith(`${DAILY_FOLDER}/`)).sort().reverse().slice(0, OVERVIEW_NOTES)
  if (long === "" && daily.length === 0) return "I have no notes about you yet."
  const parts: string[] = []
  if (long !== "") {
    const { text, cut } = newest(long, OVERVIEW_CHARS / 2)
    parts.push(`*memory.md*${cut ? " (newest part)" : ""}:\n${text}`)
  }
  if (daily.length > 0) {
    const lines = await Promise.all(daily.map(async (source) => `• ${source}: ${firstLine(await readIfAny(path.join(folder, source)))}`))
    parts.push(`*Latest notes*:\n${lines.join("\n")}`)
  }
  const chains = chainsOf(await readChunks(folder)).slice(0, OVERVIEW_CHAINS)
  if (chains.length > 0) {
    const lines = chains.map(({ slot, notes }) => `• ${slot}: ${notes.map((note) => `${note.source} (${note.date})`).join(" → ")}, the last is current`)
    parts.push(`*Facts that changed* (older notes stay as history):\n${lines.join("\n")}`)
  }
  parts.push('To correct or remove something, tell me (e.g. "forget that I live in Berlin").')
  const overview = parts.join("\n\n")
  return overview.length > OVERVIEW_CHARS ? `${overview.slice(0, OVERVIEW_CHARS - 1)}…` : overview
}

export interface ForgetRequest {
  /** Lines containing this (case-insensitive) are removed or rewritten, in every note. */
  query?: string
  /** A note (as /memory or search_memory names it) removed whole, or rewritten. */
  path?: string
  /** The text that takes the place of what was removed. */
  replacement?: string
}

export interface ForgetChange {
  path: string
  removed: string[]
  added?: string
  /** The note was deleted (nothing was left of it). */
  deleted?: boolean
  /** The note stated a fact that changed: the notes that stated it, oldest first (the last was current), before this change. */
  chain?: Array<{ path: string; date: string }>
}

/**
 * Removes what the user wants forgotten, or rewrites it: with `query`, every line of every note
 * that contains it (headings excepted) — with `replacement`, the first such line of each note
 * becomes that text; with `path`, the whole note. A dated section or a daily note left empty
 * goes too. Returns what changed (nothing: nothing matched), with the chain of a fact that
 * changed (supersede.ts) for a note in one, or an error text for bad input. Doing it again
 * changes nothing, so a replayed call is harmless.
 */
export async function forgetNotes(folder: string, request: ForgetRequest): Promise<{ changes: ForgetChange[] } | { error: string }> {
  if ((request.query === undefined) === (request.path === undefined)) return { error: "give exactly one of query (text to find) or path (a note)" }
  const notes = await listNotes(folder)
  const chains = chainsOf(await readChunks(folder))
  const withChain = (change: ForgetChange): ForgetChange => {
    const chain = chains.find((candidate: Chain) => candidate.notes.some((note) => note.source === change.path))
    return chain ? { ...change, chain: chain.notes.map(({ source, date }) => ({ path: source, date })) } : change
  }
  const result = await forget(folder, notes, request)
  return "error" in result ? result : { changes: result.changes.map(withChain) }
}

async function forget(folder: string, notes: string[], request: ForgetRequest): Promise<{ changes: ForgetChange[] } | { error: string }> {
  const { query, replacement } = request
  if (request.path !== undefined) {
    const source = path.posix.normalize(request.path.replaceAll("\\", "/"))
    if (!notes.includes(source)) return { error: `no note "${request.path}"; notes look like memory.md or ${DAILY_FOLDER}/YYYY-MM-DD-<slug>.md` }
    const file = path.join(folder, source)
    const removed = (await readIfAny(file)).split("\n").filter((line) => line.trim() !== "")
    if (replacement?.trim()) {
      await writeFile(file, `${replacement.trim()}\n`)
      return { changes: [{ path: source, removed, added: replacement.trim() }] }
    }
    await unlink(file)
    return { changes: [{ path: source, removed, deleted: true }] }
  }
  const needle = query!.trim().toLowerCase()
  if (needle.length < MIN_QUERY) return { error: `query must be at least ${MIN_QUERY} characters, so it does not match more than you mean` }
  const changes: ForgetChange[] = []
  for (const source of notes) {
    const file = path.join(folder, source)
    const lines = (await readIfAny(file)).split("\n")
    const removed: string[] = []
    let added: string | undefined
    const kept: string[] = []
    for (const line of lines) {
      if (line.startsWith("#") || !line.toLowerCase().includes(needle)) kept.push(line)
      else {
        removed.push(line)
        if (replacement?.trim() && added === undefined) kept.push((added = replacement.trim()))
      }
    }
    if (removed.length === 0) continue
    const text = withoutEmptySections(kept.join("\n"))
    if (text.trim() === "" && source !== LONG_TERM_FILE) {
      await unlink(file)
      changes.push({ path: source, removed, deleted: true })
    } else {
      await writeFile(file, text.trim() === "" ? "" : `${text.trim()}\n`)
      changes.push({ path: source, removed, added })
    }
  }
  return { changes }
}

/** Drops `## …` headings whose section has nothing left but blank lines. */
function withoutEmptySections(text: string): string {
  const sections = text.split(/(?=^## )/m)
  return sections.filter((section) => !section.startsWith("## ") || section.split("\n").slice(1).some((line) => line.trim() !== "")).join("")
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "" && !l.startsWith("#"))?.trim() ?? ""
  return line.length > 120 ? `${line.slice(0, 119)}…` : line
}

async function readIfAny(file: string): Promise<string> {
  return readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return ""
    throw error
  })
}
