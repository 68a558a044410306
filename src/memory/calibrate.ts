/**
 * How much an embedding model can be trusted on one user's notes, measured on those notes
 * with no labels: a few words from the middle of a sample of chunks are embedded as queries,
 * and the model earns trust by finding the chunk they came from. A model that captures
 * meaning or spelling finds most; a random-weight model finds about as many as chance, and
 * gets no say in the ranking (hybrid.ts). Operators plug in whatever model they have; this
 * keeps a poor one from making search worse than words alone.
 */
import type { Chunk } from "./notes.ts"

/** Chunks probed per calibration: one embedding request. */
export const PROBES = 32
/** Words (or CJK characters) per probe: about a short query. */
const PROBE_WORDS = 3
const PROBE_CHARS = 4
/** A probe counts as found when its chunk ranks this high among all the folder's chunks. */
export const FOUND_WITHIN = 3
/** Below this many chunks there is too little to tell a model from chance: trusted. */
const MIN_CHUNKS = 8

const WORD = /[\p{L}\p{N}]{3,}/gu
const HAN = /\p{sc=Han}/u

export interface Probe {
  /** Index of the chunk the probe was taken from. */
  row: number
  text: string
}

/** Up to PROBES probes, spread evenly over `chunks` (the same ones each time for the same notes). */
export function probesOf(chunks: readonly Chunk[]): Probe[] {
  if (chunks.length < MIN_CHUNKS) return []
  const probes: Probe[] = []
  const step = Math.max(1, chunks.length / PROBES)
  for (let at = 0; at < chunks.length && probes.length < PROBES; at += step) {
    const row = Math.floor(at)
    const text = probeText(chunks[row]!.text)
    if (text) probes.push({ row, text })
  }
  return probes
}

/** A few words from the middle of `text`: not its opening, which headings and dates share. */
function probeText(text: string): string | undefined {
  if (HAN.test(text)) {
    const han = Array.from(text.replace(/[^\p{sc=Han}]/gu, ""))
    if (han.length < PROBE_CHARS) return undefined
    const start = Math.floor((han.length - PROBE_CHARS) / 2)
    return han.slice(start, start + PROBE_CHARS).join("")
  }
  const words = text.match(WORD) ?? []
  if (words.length < PROBE_WORDS) return undefined
  const start = Math.floor((words.length - PROBE_WORDS) / 2)
  return words.slice(start, start + PROBE_WORDS).join(" ")
}

/**
 * Trust in [0, 1]: the share of probes found, above what chance would find, scaled so that
 * chance is 0 and finding every probe is 1. 1 when there were too few chunks to probe.
 */
export function trustOf(found: number, probes: number, chunks: number): number {
  if (probes === 0) return 1
  const chance = Math.min(1, FOUND_WITHIN / chunks)
  if (chance >= 1) return 1
  return Math.max(0, Math.min(1, (found / probes - chance) / (1 - chance)))
}
