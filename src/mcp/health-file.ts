import { readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { McpServerHealth } from "./hub.ts"

/** Where a running Steward keeps its MCP servers' states for `steward status` (another process). */
export function mcpHealthFile(dataDir: string): string {
  return join(dataDir, "mcp-status.json")
}

/** How often the states are looked at; a change is written (whole, by rename) when there is one. */
const EVERY_MS = 1_000

/** Keeps the file current while Steward runs; the returned function stops it. */
export function keepHealthFile(file: string, health: () => McpServerHealth[]): () => void {
  let last = ""
  const write = () => {
    const text = JSON.stringify({ at: new Date().toISOString(), servers: health() })
    const servers = text.slice(text.indexOf(',"servers"'))
    if (servers === last) return
    last = servers
    try {
      writeFileSync(`${file}.tmp`, text)
      renameSync(`${file}.tmp`, file)
    } catch {
      // A status file that cannot be written costs the status line, never the process.
    }
  }
  write()
  const timer = setInterval(write, EVERY_MS)
  timer.unref()
  return () => clearInterval(timer)
}

/** The states a running Steward wrote; [] when there is no file (no MCP servers, or never started). */
export function readHealthFile(file: string): McpServerHealth[] {
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { servers: McpServerHealth[] }).servers
  } catch {
    return []
  }
}
