// Entry of the load generator's worker thread. Worker threads do not inherit tsx's loader, so
// the worker registers it before loading the TypeScript module.
import { register } from "tsx/esm/api"

register()
await import("./slack-load.ts")
