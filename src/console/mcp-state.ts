import type { McpHub } from "../mcp/hub.ts"
import type { ServerState } from "../mcp/managed-server.ts"

/** An MCP server as the owner sees it: up, down, or restarting (connecting again, or the first time). */
export interface McpView {
  name: string
  state: "up" | "down" | "restarting"
  /** Tools it offers now (0 unless up). */
  tools: number
}

const WORD: Record<ServerState, McpView["state"]> = { running: "up", starting: "restarting", restarting: "restarting", failed: "down", stopped: "down" }

/** The configured MCP servers and their state in this process. Errors are left out: a server's
 *  message may quote a URL with a key in it, and the page must never show one. */
export function mcpViews(hub: McpHub | undefined): McpView[] {
  return (hub?.status() ?? []).map((server) => ({ name: server.name, state: WORD[server.state], tools: server.tools.length }))
}
