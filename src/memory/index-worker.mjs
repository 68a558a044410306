// Entry of the index worker when Steward runs from its sources (src/worker-from-source.mjs).
import { loadFromSource } from "../worker-from-source.mjs"

await loadFromSource(new URL("./index-worker.ts", import.meta.url))
