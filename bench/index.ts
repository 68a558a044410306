/** `npm run bench [-- --json]`: every benchmark, figures beside their targets. */
import { runColdStartBench } from "./coldstart.ts"
import { runConsoleBench } from "./console.ts"
import { runCoreBench } from "./core.ts"
import { runCostBench } from "./cost.ts"
import { runFetchBench } from "./fetch.ts"
import { Figures } from "./figures.ts"
import { runFirstSignBench } from "./first-sign.ts"
import { runMemoryBench } from "./memory.ts"
import { runScaleOutBench } from "./scaleout.ts"
import { runSlackBench } from "./slack.ts"
import { runSoakBench } from "./soak.ts"
import { runStreamBench } from "./stream.ts"
import { runTelegramBench } from "./telegram.ts"
import { runYearBench } from "./year.ts"

const json = process.argv.includes("--json")
await runColdStartBench(new Figures(json))
await runConsoleBench(new Figures(json))
await runCoreBench(new Figures(json))
await runCostBench(new Figures(json))
await runTelegramBench(new Figures(json))
await runSlackBench(new Figures(json))
await runFirstSignBench(new Figures(json))
await runStreamBench(new Figures(json))
await runSoakBench(new Figures(json))
await runFetchBench(new Figures(json))
await runScaleOutBench(new Figures(json))
if (!process.argv.includes("--core")) {
  await runYearBench(new Figures(json))
  await runMemoryBench({ json })
}
process.exit(0)
