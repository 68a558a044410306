// Entry of the document worker. Worker threads do not inherit tsx's loader (neither under the tsx
// CLI nor under vitest), so the worker registers it before loading the TypeScript module.
import { register } from "tsx/esm/api"

register()
await import("./document-worker.ts")
