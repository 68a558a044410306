import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"

/** The page's files, built into dist/console/ (scripts/build.mjs) and read from there; from the
 *  sources (tsx, tests), the build's copy is used. */
const ASSET_DIR = new URL(import.meta.url.endsWith(".ts") ? "../../dist/console/" : "./console/", import.meta.url)

const FILES = {
  "index.html": "text/html; charset=utf-8",
  "login.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
} as const

export type AssetName = keyof typeof FILES

export interface Asset {
  type: string
  body: Buffer
  etag: string
}

/** Every file of the page, read once at start-up; a build without them is a clear error, not a blank page. */
export function loadAssets(): Record<AssetName, Asset> {
  const entries = Object.entries(FILES).map(([name, type]) => {
    let body: Buffer
    try {
      body = readFileSync(new URL(name, ASSET_DIR))
    } catch (error) {
      throw new Error(`the owner console's ${name} is missing from ${ASSET_DIR.pathname} (run npm run build): ${error instanceof Error ? error.message : error}`)
    }
    return [name, { type, body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` }]
  })
  return Object.fromEntries(entries) as Record<AssetName, Asset>
}
