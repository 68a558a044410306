/** `npm run bench [-- --json]`: every benchmark, figures beside their targets. */
import { runCoreBench } from "./core.ts"
import { Figures } from "./figures.ts"
import { runMemoryBench } from "./memory.ts"
import { runSlackBench } from "./slack.ts"
import { runSoakBench } from "./soak.ts"
import { runTelegramBench } from "./telegram.ts"

const json = process.argv.includes("--json")
await runCoreBench(new Figures(json))
await runTelegramBench(new Figures(json))
await runSlackBench(new Figures(json))
await runSoakBench(new Figures(json))
if (!process.argv.includes("--core")) await runMemoryBench({ json })
process.exit(0)
