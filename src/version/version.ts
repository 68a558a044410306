import { readFileSync } from "node:fs"

/** Steward's version, from the package's own package.json: two folders up from
 *  src/version/version.ts, one up from the build's dist/*.js (or the dist/ chunk this code is
 *  bundled into). Read once. */
export const stewardVersion = (() => {
  let version: string | undefined
  return (): string => {
    const packageJson = new URL(import.meta.url.endsWith(".ts") ? "../../package.json" : "../package.json", import.meta.url)
    version ??= (JSON.parse(readFileSync(packageJson, "utf8")) as { version: string }).version
    return version
  }
})()
