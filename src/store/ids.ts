import { monotonicFactory } from "ulid"

/** ulid's default source asks the OS for one byte per character, 16 calls for an id of a new
 *  millisecond; this hands out the same kind of bytes from a pool refilled 4 KiB at a time. */
const pool = new Uint8Array(4096)
let drawn = pool.length
function pooledRandom(): number {
  if (drawn === pool.length) {
    crypto.getRandomValues(pool)
    drawn = 0
  }
  return pool[drawn++]! / 256
}

/** Ids sort in creation order, even within one millisecond. */
export const newId = monotonicFactory(pooledRandom)
