// `npm run build` (and `prepare`, so `npm ci` builds): bundles Steward into dist/ with esbuild.
// Dependencies stay external (node_modules is there at run time, and sqlite3 is native), so the
// bundle holds only Steward's own code: one file to load instead of a hundred, no TypeScript
// runtime. Type checking is `npm run typecheck`; esbuild only strips types.
import { chmod, copyFile, mkdir, readdir, rm } from "node:fs/promises"
import { basename, join } from "node:path"
import { build } from "esbuild"
import { missingRuntimeFiles } from "./runtime-files.mjs"

// Every worker thread's entry (src/**/<name>-worker.ts) is an entry of its own, started from the
// bundle as ./<name>-worker.js; found by name, so a new worker cannot be left out of the build.
const workers = {}
for (const file of await readdir("src", { recursive: true })) {
  if (file.endsWith("-worker.ts")) workers[basename(file, ".ts")] = join("src", file)
}

const options = {
  entryPoints: {
    main: "src/main.ts",
    cli: "src/cli.ts",
    ...workers,
  },
  outdir: "dist",
  bundle: true,
  // Adapters and providers are imported on demand (lazily); their code goes to chunks beside
  // the entries, so `new URL("../prompts/", import.meta.url)` means the same from every file.
  splitting: true,
  chunkNames: "chunk-[hash]",
  format: "esm",
  platform: "node",
  target: "node20.19",
  packages: "external",
  // For readable stack traces: NODE_OPTIONS=--enable-source-maps.
  sourcemap: "linked",
  logLevel: "warning",
}

// The owner console's page (src/console/page/): its script bundled for the browser, its HTML,
// style and icon copied beside it. Steward serves them from dist/console/, so nothing is fetched
// from elsewhere and the page works offline.
const consolePage = {
  entryPoints: { console: "src/console/page/console.ts" },
  outdir: "dist/console",
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "chrome110",
  minify: true,
  logLevel: "warning",
}
const CONSOLE_FILES = ["index.html", "login.html", "console.css", "favicon.svg"]

await rm("dist", { recursive: true, force: true })
await build(options)
await build(consolePage)
await mkdir("dist/console", { recursive: true })
for (const file of CONSOLE_FILES) await copyFile(`src/console/page/${file}`, `dist/console/${file}`)
// `npx steward` runs dist/cli.js directly; esbuild keeps the shebang of src/cli.ts.
await chmod("dist/cli.js", 0o755)
const missing = missingRuntimeFiles("dist")
if (missing.length > 0) {
  console.error(`The build does not contain what these load at run time:\n  ${missing.join("\n  ")}`)
  process.exit(1)
}
