// What the built program loads by URL at run time — worker entries, prompts, package.json — must
// be there beside it: `new URL("./x", import.meta.url)` is not followed by the bundler, so a file
// it names is in dist/ only when the build puts it there (the HTML-to-text worker once was not,
// and fetch_url failed on every page in the built product while the tests, on the sources, passed).
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const URL_OF_MODULE = /new URL\(((?:[^()]|\([^()]*\))*?),\s*import\.meta\.url\)/g
const RELATIVE_LITERAL = /"(\.{1,2}\/[^"]*)"/g

/** The `new URL(…, import.meta.url)` expressions in `distDir`'s JavaScript none of whose relative
 *  paths exists there (an expression may name several, e.g. one for the sources and one for the
 *  build), each as `file: expression`. */
export function missingRuntimeFiles(distDir) {
  const missing = []
  for (const file of readdirSync(distDir).filter((name) => name.endsWith(".js"))) {
    for (const [, expression] of readFileSync(join(distDir, file), "utf8").matchAll(URL_OF_MODULE)) {
      const paths = [...expression.matchAll(RELATIVE_LITERAL)].map(([, path]) => path)
      if (paths.length > 0 && !paths.some((path) => existsSync(join(distDir, path)))) missing.push(`${file}: ${expression.trim()}`)
    }
  }
  return missing
}
