/** `npm run bench [-- --json]`: every benchmark, figures beside targets. */
import { runCoreBench } from "./core.ts"
import { Figures } from "./figures.ts"

const figures = new Figures(process.argv.includes("--json"))
await runCoreBench(figures)
process.exit(0)
