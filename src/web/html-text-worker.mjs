// Entry of the HTML-to-text worker. Worker threads do not inherit tsx's loader (neither under the
// tsx CLI nor under vitest), so the worker registers it before loading the TypeScript module.
import { register } from "tsx/esm/api"

register()
await import("./html-text-worker.ts")
