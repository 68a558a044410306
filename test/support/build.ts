import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

/**
 * Vitest global setup: builds dist/ once per run, so the end-to-end tests that start Steward as
 * a real program run the code `npm start` runs (node dist/main.js), built from the sources
 * under test rather than whatever an earlier build left.
 */
export default function build(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: "inherit" })
}
