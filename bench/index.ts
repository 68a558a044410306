/** `npm run bench [-- --json] [-- --only soak,stream]`: every benchmark (or those named), figures
 *  beside their targets. */
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
/** In the order they run; `--core` leaves out the two long ones at the end. */
const BENCHES: Record<string, () => Promise<void>> = {
  coldstart: () => runColdStartBench(new Figures(json)),
  console: () => runConsoleBench(new Figures(json)),
  core: () => runCoreBench(new Figures(json)),
  cost: () => runCostBench(new Figures(json)),
  telegram: () => runTelegramBench(new Figures(json)),
  slack: () => runSlackBench(new Figures(json)),
  "first-sign": () => runFirstSignBench(new Figures(json)),
  stream: () => runStreamBench(new Figures(json)),
  soak: () => runSoakBench(new Figures(json)),
  fetch: () => runFetchBench(new Figures(json)),
  scaleout: () => runScaleOutBench(new Figures(json)),
  year: () => runYearBench(new Figures(json)),
  memory: () => runMemoryBench({ json }),
}

const only = process.argv[process.argv.indexOf("--only") + 1]
const names = process.argv.includes("--only") && only ? only.split(",") : Object.keys(BENCHES).filter((name) => !process.argv.includes("--core") || (name !== "year" && name !== "memory"))
const unknown = names.filter((name) => !(name in BENCHES))
if (unknown.length > 0) {
  process.stderr.write(`bench: no benchmark ${unknown.join(", ")}; there are ${Object.keys(BENCHES).join(", ")}\n`)
  process.exit(2)
}
for (const name of names) await BENCHES[name]!()
process.exit(0)
