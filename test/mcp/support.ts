import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino, { type Logger } from "pino"
import type { ToolContext, ToolDefinition } from "../../src/tool/tool.ts"

/** mcp.json entry that runs the fake stdio server with this Node and tsx (by path, so that any
 *  working folder will do). */
export function stdioServer(env: Record<string, string> = {}, cwd?: string) {
  return { command: process.execPath, args: ["--import", TSX, FAKE_STDIO], env, ...(cwd ? { cwd } : {}) }
}
const FAKE_STDIO = new URL("../fakes/mcp-stdio.ts", import.meta.url).pathname
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href

/** Writes an MCP_CONFIG file and returns its path. */
export function mcpConfigFile(servers: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "steward-mcp-"))
  const path = join(dir, "mcp.json")
  writeFileSync(path, JSON.stringify({ mcpServers: servers }))
  return path
}

/** A logger whose lines the test can read. */
export function recordingLogger(): { log: Logger; lines: Array<{ level: number; msg: string; [key: string]: unknown }> } {
  const lines: Array<{ level: number; msg: string }> = []
  const log = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { log, lines }
}

/** The folder the test calls' workspaces are in (`<dir>/<user>`). */
export const testWorkspace = mkdtempSync(join(tmpdir(), "steward-mcp-workspace-"))

/** A call as a Worker's run makes it; `extra` adds or replaces capabilities (questions, permit, complete…). */
export function callTool(tool: ToolDefinition, args: unknown, abort = new AbortController().signal, extra: Partial<ToolContext> = {}): Promise<any> {
  const replies = { reply: async () => {}, sendFile: async () => {} }
  const ctx = { role: "worker", agent: "default", conversation: "test:c1", user: "test:u1", sessionId: "s1", callId: "c1", abort, workspaceDir: testWorkspace, replies, incidents: { error: () => {} }, ...extra } as unknown as ToolContext
  return tool.execute(tool.parameters.parse(args), ctx)
}
