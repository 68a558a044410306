/**
 * Where a memory folder's chunk vectors are kept between runs, behind one small interface so
 * they can move into Steward's store later. The file store writes one hidden file per folder,
 * `.vectors.bin` (hidden files are not notes): a JSON header line (model, dimensions, chunk
 * keys) and then the vectors as float32 in the machine's byte order (little-endian on x86 and
 * ARM), replaced atomically by a rename.
 */
import { readFile, rename, writeFile } from "node:fs/promises"
import path from "node:path"

export interface StoredVectors {
  model: string
  /** Chunk key (a hash of the chunk's text) → unit vector. */
  vectors: Map<string, Float32Array>
}

export interface VectorStore {
  /** undefined when nothing is stored (or what is stored cannot be read: it is rebuilt). */
  load(folder: string): Promise<StoredVectors | undefined>
  save(folder: string, stored: StoredVectors): Promise<void>
}

const FILE = ".vectors.bin"
const MAGIC = "steward-vectors 1"

export class FileVectorStore implements VectorStore {
  async load(folder: string): Promise<StoredVectors | undefined> {
    const data = await readFile(path.join(folder, FILE)).catch(() => undefined)
    if (!data) return undefined
    const newline = data.indexOf(10)
    try {
      const header = JSON.parse(data.subarray(0, newline).toString("utf8")) as { magic: string; model: string; dims: number; keys: string[] }
      const body = data.subarray(newline + 1)
      if (header.magic !== MAGIC || body.length !== header.keys.length * header.dims * 4) return undefined
      // Copied out: a Float32Array view needs 4-byte alignment, which the header length breaks.
      const floats = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.length))
      const vectors = new Map(header.keys.map((key, i) => [key, floats.subarray(i * header.dims, (i + 1) * header.dims)]))
      return { model: header.model, vectors }
    } catch {
      return undefined
    }
  }

  async save(folder: string, { model, vectors }: StoredVectors): Promise<void> {
    const keys = [...vectors.keys()]
    const dims = vectors.size === 0 ? 0 : vectors.values().next().value!.length
    const body = new Float32Array(keys.length * dims)
    keys.forEach((key, i) => body.set(vectors.get(key)!, i * dims))
    const header = Buffer.from(`${JSON.stringify({ magic: MAGIC, model, dims, keys })}\n`)
    const file = path.join(folder, FILE)
    await writeFile(`${file}.tmp`, Buffer.concat([header, Buffer.from(body.buffer)]))
    await rename(`${file}.tmp`, file)
  }
}
