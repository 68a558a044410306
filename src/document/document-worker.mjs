// Entry of the document worker when Steward runs from its sources (src/worker-from-source.mjs).
import { loadFromSource } from "../worker-from-source.mjs"

await loadFromSource(new URL("./document-worker.ts", import.meta.url))
