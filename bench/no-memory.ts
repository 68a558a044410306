import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SupervisorMemory } from "../src/app.ts"

/** Memory that keeps nothing: the benchmarks measure the core, not note files. Its folder does
 *  not exist, so memory.md is empty for every user. */
export const noMemory: SupervisorMemory = {
  remember: async () => ({ path: "" }),
  search: async () => [],
  recordCompaction: async () => {},
  folder: () => join(tmpdir(), "steward-bench-no-memory"),
}
