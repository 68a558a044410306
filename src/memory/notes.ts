/**
 * The note files of one memory folder: `*.md` at its top (memory.md and anything added by hand)
 * and in its `memory/` subfolder (the daily notes). Hidden files and editors' temporary files
 * are not notes.
 */
import { readdir, readFile, stat } from "node:fs/promises"
import path from "node:path"
import { chunkMarkdown } from "./chunk.ts"
import { isCalendarDay, localDay } from "./dates.ts"

export const LONG_TERM_FILE = "memory.md"
export const DAILY_FOLDER = "memory"

/** Identifies a version of a file without reading it. */
export interface Stamp {
  mtimeMs: number
  size: number
}

export interface Chunk {
  /** Path relative to the memory folder, with `/` separators. */
  source: string
  /** YYYY-MM-DD the search filters on. */
  date: string
  text: string
}

export interface Note {
  source: string
  stamp: Stamp
  chunks: Chunk[]
}

const DAILY_NAME = /^(\d{4}-\d{2}-\d{2})-/

export function isNoteName(name: string): boolean {
  return name.endsWith(".md") && !name.startsWith(".")
}

export function sameStamp(a: Stamp | undefined, b: Stamp | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.mtimeMs === b.mtimeMs && a.size === b.size)
}

export async function listNotes(dir: string): Promise<string[]> {
  const [top, daily] = await Promise.all([names(dir), names(path.join(dir, DAILY_FOLDER))])
  return [...top, ...daily.map((name) => `${DAILY_FOLDER}/${name}`)]
}

async function names(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(ifMissing([]))
  return entries.filter((entry) => entry.isFile() && isNoteName(entry.name)).map((entry) => entry.name)
}

/** The stamp of a note, or undefined when it is gone (or is no longer a file). */
export async function statNote(dir: string, source: string): Promise<Stamp | undefined> {
  const stats = await stat(path.join(dir, source)).catch(ifMissing(undefined))
  return stats?.isFile() ? { mtimeMs: stats.mtimeMs, size: stats.size } : undefined
}

/**
 * Reads and chunks a note. The stamp is taken before reading: if the file changes in between,
 * the stamp is the older one and the change is noticed (and the note re-read) next time.
 */
export async function readNote(dir: string, source: string): Promise<Note | undefined> {
  const stamp = await statNote(dir, source)
  if (!stamp) return undefined
  const markdown = await readFile(path.join(dir, source), "utf8").catch(ifMissing(undefined))
  if (markdown === undefined) return undefined
  const chunks = chunkMarkdown(markdown).map((chunk) => ({ source, date: noteDate(source, chunk.date, stamp), text: chunk.text }))
  return { source, stamp, chunks }
}

/** Every chunk of the folder's notes (for what reads the whole folder: /memory, forget). */
export async function readChunks(dir: string): Promise<Chunk[]> {
  const notes = await Promise.all((await listNotes(dir)).map((source) => readNote(dir, source)))
  return notes.flatMap((note) => note?.chunks ?? [])
}

/**
 * The date a chunk is filtered by. A daily note (`YYYY-MM-DD-…md`) is dated by its name, whatever
 * headings it contains: a `## 2025-07-07` inside `2025-01-01-trip.md` is text, not its date.
 * Elsewhere (memory.md, notes added by hand) a section under a dated heading takes that heading's
 * day, and an undated one the file's modification day.
 */
function noteDate(source: string, heading: string | undefined, stamp: Stamp): string {
  const named = DAILY_NAME.exec(path.basename(source))?.[1]
  if (named && isCalendarDay(named)) return named
  return heading ?? localDay(new Date(stamp.mtimeMs))
}

function ifMissing<T>(value: T): (error: NodeJS.ErrnoException) => T {
  return (error) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR" || error.code === "EISDIR") return value
    throw error
  }
}
