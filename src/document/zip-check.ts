import { inflateRawSync } from "node:zlib"
import { MAX_UNZIPPED_BYTES, MAX_ZIP_ENTRIES } from "../untrusted/limits.ts"
import { OverLimit } from "../untrusted/serve.ts"

const END_OF_DIRECTORY = 0x06054b50
const DIRECTORY_ENTRY = 0x02014b50
const LOCAL_HEADER = 0x04034b50
// The end record is 22 bytes and may be followed by a comment of up to 65535.
const END_SEARCH = 22 + 0xffff
const STORED = 0
const DEFLATED = 8
const MIB = 1024 * 1024

/**
 * Checks a zip (a docx, or any zip-based office file) before a parser unpacks it: at most
 * MAX_ZIP_ENTRIES entries, and all of them together at most MAX_UNZIPPED_BYTES — counted by
 * inflating each entry with that as its output limit, because the sizes a zip declares may lie
 * and entries may overlap (one compressed block named by many entries). Throws OverLimit for a
 * bomb, an Error for a file that is not a zip it can read.
 */
export function checkZip(data: Buffer): void {
  const end = data.subarray(Math.max(0, data.length - END_SEARCH)).lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (end < 0) throw new Error("it is not a zip archive (a .docx is one)")
  const endAt = Math.max(0, data.length - END_SEARCH) + end
  if (data.readUInt32LE(endAt) !== END_OF_DIRECTORY || endAt + 22 > data.length) throw new Error("its zip directory is damaged")
  const declared = data.readUInt16LE(endAt + 10)
  // 0xffff is zip64's marker: a document never needs that many entries.
  if (declared > MAX_ZIP_ENTRIES) throw new OverLimit(`it holds more than ${MAX_ZIP_ENTRIES} files inside`)
  let at = data.readUInt32LE(endAt + 16)
  let unpacked = 0
  for (let index = 0; index < declared; index++) {
    if (at + 46 > data.length || data.readUInt32LE(at) !== DIRECTORY_ENTRY) throw new Error("its zip directory is damaged")
    const method = data.readUInt16LE(at + 10)
    const compressedSize = data.readUInt32LE(at + 20)
    const local = data.readUInt32LE(at + 42)
    at += 46 + data.readUInt16LE(at + 28) + data.readUInt16LE(at + 30) + data.readUInt16LE(at + 32)
    if (local + 30 > data.length || data.readUInt32LE(local) !== LOCAL_HEADER) throw new Error("a zip entry is damaged")
    const start = local + 30 + data.readUInt16LE(local + 26) + data.readUInt16LE(local + 28)
    const compressed = data.subarray(start, start + compressedSize)
    unpacked += entrySize(method, compressed, MAX_UNZIPPED_BYTES - unpacked)
  }
}

/** An entry's unpacked size, inflating at most `budget` bytes of it. */
function entrySize(method: number, compressed: Buffer, budget: number): number {
  const over = () => new OverLimit(`it unpacks to more than ${MAX_UNZIPPED_BYTES / MIB} MiB (a zip bomb?)`)
  if (method === STORED) {
    if (compressed.length > budget) throw over()
    return compressed.length
  }
  if (method !== DEFLATED) throw new Error(`it uses a zip compression method (${method}) documents do not`)
  try {
    return inflateRawSync(compressed, { maxOutputLength: Math.max(1, budget) }).length
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) throw over()
    throw new Error("a zip entry does not inflate")
  }
}
