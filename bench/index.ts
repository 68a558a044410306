/** `npm run bench [-- --json]`: every benchmark, figures beside their targets. */
import { runColdStartBench } from "./coldstart.ts"
import { runCoreBench } from "./core.ts"
import { Figures } from "./figures.ts"
import { runMemoryBench } from "./memory.ts"
import { runSlackBench } from "./slack.ts"
import { runTelegramBench } from "./telegram.ts"

const json = process.argv.includes("--json")
await runColdStartBench(new Figures(json))
await runCoreBench(new Figures(json))
await runTelegramBench(new Figures(json))
await runSlackBench(new Figures(json))
if (!process.argv.includes("--core")) await runMemoryBench({ json })
process.exit(0)
