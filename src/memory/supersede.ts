/**
 * Facts that replace facts. A note that states a slot's value or announces a change (facts.ts)
 * supersedes every older note about that slot — the older note's first slot — that belongs to
 * someone it mentions: "Address: 5 Elm Rd" supersedes "I live at 12 Oak St", "Anna's new
 * mobile: …" supersedes "Anna's phone number is …" but not the user's own; a correction
 * supersedes the note holding the value it calls wrong.
 * Links are worked out from the notes whenever they are indexed (hand-written notes too), and
 * followed at search time, without a model: a hit that has been superseded brings its current
 * note in just ahead of it, so the current fact comes first however much better the old note
 * matches the question's words. The old note stays where it was found, and a date window that
 * ends before the change finds it as the newest (the superseding note is outside the window).
 *
 * Chosen by measurement on the retrieval set (test/support/retrieval) over a stronger recency
 * prior; see the README ("Facts that change").
 */
import { detectLanguage } from "./language.ts"
import { BROADER, factOf, type Fact } from "./facts.ts"
import { corrects } from "./statement.ts"
import type { Chunk } from "./notes.ts"

/** A chunk that can replace an older fact (it states one, announces a change, or corrects a value), with what it states. */
export interface Update extends Chunk {
  fact: Fact
}

/** The chunks of `chunks` that can replace an older fact. */
export function updatesOf(chunks: readonly Chunk[]): Update[] {
  const updates: Update[] = []
  for (const chunk of chunks) {
    const fact = factOf(chunk.text)
    if (fact && (fact.update || fact.stated.length > 0 || fact.corrects.length > 0)) updates.push({ source: chunk.source, date: chunk.date, text: chunk.text, fact })
  }
  return updates
}

/**
 * True when `newer` replaces the fact `older` states: a newer note that states (or changes)
 * the same slot for the same owner, whatever its wording — "Address: 5 Elm Rd" replaces "I
 * live at 12 Oak St" — or a correction that names a value of the older note as wrong.
 */
export function supersedes(newer: Update, older: Chunk & { fact?: Fact }): boolean {
  if (newer.date < older.date || (newer.source === older.source && newer.text === older.text)) return false
  if (newer.fact.corrects.length > 0 && corrects({ text: newer.text, corrects: newer.fact.corrects }, older.text)) return true
  if (!older.fact || newer.date === older.date) return false
  // A word of change vouches for every slot the note names; without one, only a slot it gives a value counts.
  const slot = older.fact.slots[0]!
  // "My work email is …" then "mail goes to … from now on": a change need not repeat the qualifier.
  const same = aboutSame(slot, newer.fact.update ? newer.fact.slots : newer.fact.stated) || (newer.fact.update && slot.includes("@") && aboutSame(slot.split("@")[0]!, newer.fact.slots))
  return same && older.fact.owners.every((owner) => newer.fact.mentions.has(owner))
}

/**
 * A note about `slot` is replaced by one that names it, or that names only its broader slot
 * ("my new number" replaces "my mobile number", "my new landline" does not).
 */
function aboutSame(slot: string, newer: readonly string[]): boolean {
  if (newer.includes(slot)) return true
  if (slot.startsWith(LABEL)) return newer.some((other) => other.startsWith(LABEL) && sameLabel(slot, other))
  const broader = BROADER[slot]
  return broader !== undefined && newer.includes(broader) && !newer.some((other) => BROADER[other] === broader)
}

const LABEL = "label:"
/** "favourite coffee" and "favourite coffee order" are one label: the words of one are all in the other. */
function sameLabel(a: string, b: string): boolean {
  const [shorter, longer] = [a, b].map((label) => label.slice(LABEL.length).split(" ")).sort((x, y) => x.length - y.length)
  return shorter!.every((word) => longer!.includes(word))
}

/** The question names every word of the label ("locker code" in "what was the locker code"). */
function labelAsked(label: string, query: string): boolean {
  const asked = query.toLowerCase()
  return label.slice(LABEL.length).split(" ").every((word) => asked.includes(word))
}

/** What a search asks: inclusive YYYY-MM-DD bounds (only a note inside them can be the current one), and its words. */
export interface Asked {
  after?: string
  before?: string
  query: string
}

/** The updates of one memory folder, ready to answer "what replaced this note?". */
export class Supersession {
  /** Updates by slot, newest first. */
  private readonly bySlot = new Map<string, Update[]>()
  /** Updates that correct a value, newest first: they may replace a note of any slot. */
  private readonly corrections: Update[] = []

  constructor(updates: readonly Update[]) {
    for (const update of [...updates].sort(newestFirst)) {
      for (const slot of update.fact.slots) this.bySlot.set(slot, [...(this.bySlot.get(slot) ?? []), update])
      if (update.fact.corrects.length > 0) this.corrections.push(update)
    }
  }

  get size(): number {
    return new Set([...this.bySlot.values()].flat()).size
  }

  /**
   * The note that states `chunk`'s fact now (within the asked window); undefined when nothing
   * replaced it. Among several notes that replaced it (the same change written in two
   * languages), the newest in the question's language, else in the old note's, else the
   * newest. The newest is the end of the chain: a change to a change names the slot too.
   */
  currentOf(chunk: Chunk, { after, before, query }: Asked): Update | undefined {
    if (this.bySlot.size === 0) return undefined
    const fact = factOf(chunk.text)
    const older = { ...chunk, fact }
    // A label is a kind of fact only when asked for by name: "Groceries: …" notes do not replace each other.
    const slot = fact && (!fact.slots[0]!.startsWith(LABEL) || labelAsked(fact.slots[0]!, query)) ? fact.slots[0] : undefined
    // An update that names only the broader slot is filed under it; a label's update may be filed under a longer label.
    const filed = [
      ...this.corrections,
      ...(slot ? (this.bySlot.get(slot) ?? []) : []),
      ...(slot && BROADER[slot] ? (this.bySlot.get(BROADER[slot]) ?? []) : []),
      ...(slot?.includes("@") ? (this.bySlot.get(slot.split("@")[0]!) ?? []) : []),
      ...(slot?.startsWith(LABEL) ? [...this.bySlot].filter(([other]) => other !== slot && other.startsWith(LABEL)).flatMap(([, updates]) => updates) : []),
    ]
    const candidates = [...new Set(filed)].sort(newestFirst).filter((update) => (!after || update.date >= after) && (!before || update.date <= before) && supersedes(update, older))
    if (candidates.length <= 1) return candidates[0]
    for (const language of [writtenIn(query), writtenIn(chunk.text)]) {
      const same = candidates.find((update) => writtenIn(update.text) === language)
      if (same) return same
    }
    return candidates[0]
  }
}

const newestFirst = (a: { date: string }, b: { date: string }) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0)

const HAN = /\p{sc=Han}/u

/** The language a note is written in, Chinese included (which is analysed as the default language). */
function writtenIn(text: string): string {
  return HAN.test(text) ? "zh" : detectLanguage(text)
}

/** How a search candidate stands in a chain of changes. */
export interface Linked {
  /** The note that states this candidate's fact now. */
  supersededBy?: string
  /** The candidate is the current fact of this (older) note. */
  replaces?: string
}

interface Ranked {
  chunk: Chunk
  score: number
  covers: number
}

/**
 * `candidates` with, for each superseded one, its current note beside it: scored and covering
 * as the old one (or better, if it was found itself), so the recency prior (recency.ts) puts
 * it just ahead. The old candidate is marked with what superseded it.
 */
export function withCurrentFacts<T extends Ranked>(candidates: readonly T[], supersession: Supersession, asked: Asked, make: (update: Update) => T): Array<T & Linked> {
  const key = (chunk: Chunk) => `${chunk.source}\u0000${chunk.text}`
  const out = new Map<string, T & Linked>(candidates.map((candidate) => [key(candidate.chunk), candidate]))
  for (const candidate of candidates) {
    const current = supersession.currentOf(candidate.chunk, asked)
    if (!current) continue
    out.set(key(candidate.chunk), { ...out.get(key(candidate.chunk))!, supersededBy: current.source })
    const known = out.get(key(current))
    const base = known ?? make(current)
    out.set(key(current), { ...base, score: Math.max(known?.score ?? 0, candidate.score), covers: base.covers | candidate.covers, replaces: candidate.chunk.source })
  }
  return [...out.values()]
}

/** A fact that changed: the notes that stated it, oldest first; the last states it now. */
export interface Chain {
  slot: string
  notes: Array<{ source: string; date: string }>
}

/** The chains of changes among `chunks` (a folder's notes), newest change first. */
export function chainsOf(chunks: readonly Chunk[]): Chain[] {
  const supersession = new Supersession(updatesOf(chunks))
  const chains = new Map<string, Chain>()
  for (const chunk of chunks) {
    const current = supersession.currentOf(chunk, { query: "" })
    if (!current) continue
    const key = `${current.source}\u0000${current.date}`
    const chain = chains.get(key) ?? { slot: (factOf(chunk.text) ?? current.fact).slots[0]!, notes: [{ source: current.source, date: current.date }] }
    if (!chain.notes.some((note) => note.source === chunk.source && note.date === chunk.date)) chain.notes.push({ source: chunk.source, date: chunk.date })
    chains.set(key, chain)
  }
  for (const chain of chains.values()) chain.notes.sort((a, b) => newestFirst(b, a))
  return [...chains.values()].sort((a, b) => newestFirst(a.notes.at(-1)!, b.notes.at(-1)!))
}
