import { serverHealth, type McpHub, type McpServerHealth } from "../mcp/hub.ts"

/** An MCP server as the owner sees it: up, down, or restarting, with the tools it offers now. */
export type McpView = Pick<McpServerHealth, "name" | "state" | "tools">

/** The configured MCP servers and their state in this process, as /healthz reports them. Errors
 *  are left out: a server's message may quote a URL with a key in it, and the page must never
 *  show one. */
export function mcpViews(hub: Pick<McpHub, "status"> | undefined): McpView[] {
  return (hub?.status() ?? []).map(serverHealth).map(({ name, state, tools }) => ({ name, state, tools }))
}
