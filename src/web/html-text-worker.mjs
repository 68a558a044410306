// Entry of the html-text worker when Steward runs from its sources (src/worker-from-source.mjs).
import { loadFromSource } from "../worker-from-source.mjs"

await loadFromSource(new URL("./html-text-worker.ts", import.meta.url))
