// Starts a worker thread's TypeScript module from the sources (tests, `npm run dev`; the build
// ships each worker compiled). Worker threads do not inherit tsx's loader, and registering it in
// each worker compiles every module again, about 2 s a worker. Instead esbuild bundles the module
// as the build does, once: the bundle is kept with the list of files it was made from and their
// times, and used again by every worker until one of them changes.
import { createHash, randomUUID } from "node:crypto"
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { basename, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

// Inside the project, so the bundle's imports of packages resolve from its node_modules.
const CACHE = fileURLToPath(new URL("../node_modules/.cache/steward-workers/", import.meta.url))

/** Loads the TypeScript module `entry` (a file URL) in this thread. */
export async function loadFromSource(entry) {
  const file = fileURLToPath(entry)
  // Named by the entry's path too: checkouts that share node_modules keep bundles of their own.
  const name = `${basename(file, ".ts")}-${createHash("sha256").update(file).digest("hex").slice(0, 12)}`
  const bundle = `${CACHE}${name}.mjs`
  const inputs = `${CACHE}${name}.inputs.json`
  if (!unchanged(inputs)) await rebuild(file, bundle, inputs)
  await import(pathToFileURL(bundle).href)
}

/** True when the bundle's inputs are all as they were when it was made. */
function unchanged(inputs) {
  try {
    const times = JSON.parse(readFileSync(inputs, "utf8"))
    return Object.entries(times).every(([file, time]) => statSync(file).mtimeMs === time)
  } catch {
    return false
  }
}

async function rebuild(entry, bundle, inputs) {
  const { build } = await import("esbuild")
  mkdirSync(CACHE, { recursive: true })
  // Workers starting together may build at once: each writes files of its own, then renames them
  // into place, so no worker loads a half-written bundle.
  const temporary = `${CACHE}${randomUUID()}`
  const { metafile } = await build({ entryPoints: [entry], outfile: `${temporary}.mjs`, bundle: true, format: "esm", platform: "node", target: "node20.19", packages: "external", metafile: true, logLevel: "warning" })
  const times = Object.fromEntries(Object.keys(metafile.inputs).map((file) => [resolve(file), statSync(file).mtimeMs]))
  writeFileSync(`${temporary}.json`, JSON.stringify(times))
  renameSync(`${temporary}.mjs`, bundle)
  renameSync(`${temporary}.json`, inputs)
}
