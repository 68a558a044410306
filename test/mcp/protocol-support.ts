import { afterEach } from "vitest"
import { readMcpConfig } from "../../src/mcp/config.ts"
import { McpHub } from "../../src/mcp/hub.ts"
import type { Question } from "../../src/question/questions.ts"
import type { ToolContext, ToolDefinition } from "../../src/tool/tool.ts"
import { startMcpHttpServer, type FakeMcpHttp } from "../fakes/mcp-http.ts"
import { mcpConfigFile, recordingLogger } from "./support.ts"

// The protocol test server (test/fakes/mcp-protocol.ts) behind a hub, on each transport, and a
// user answering its questions: shared by the protocol test files.

const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href
const PROTOCOL_STDIO = new URL("../fakes/mcp-protocol-stdio.ts", import.meta.url).pathname
const hubs: McpHub[] = []
const https: FakeMcpHttp[] = []
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()))
  await Promise.all(https.splice(0).map((server) => server.close()))
})

/** An HTTP server stopped after the test. */
export async function httpServer(options: Parameters<typeof startMcpHttpServer>[0]): Promise<FakeMcpHttp> {
  const server = await startMcpHttpServer(options)
  https.push(server)
  return server
}

/** A hub with one server, "proto", stopped after the test. */
export async function startHub(entry: unknown, timeouts: { toolTimeoutMs?: number; toolMaxMs?: number; elicitationTimeoutMs?: number } = {}) {
  const { log } = recordingLogger()
  const hub = new McpHub(readMcpConfig(mcpConfigFile({ proto: entry }), ["read_file"]), {
    toolTimeoutMs: 10_000,
    ...timeouts,
    builtIn: ["read_file"],
    log,
    backoff: { initialMs: 50, maxMs: 400, maxFailures: 3 },
    startTimeoutMs: 25_000,
  })
  hubs.push(hub)
  await hub.start()
  const tool = (id: string): ToolDefinition => {
    const found = hub.families()[0]!.members!().find((t) => t.id === id)
    if (!found) throw new Error(`no tool ${id}; have ${hub.status()[0]!.tools.join(", ")}`)
    return found
  }
  return { hub, tool, ids: () => hub.families()[0]!.members!().map((t) => t.id) }
}

/** Answers each question the way `answers` says (by the question's text), recording them. */
export function asker(answers: (question: Question) => { answer: string; source?: "user" | "timeout" } | Promise<{ answer: string; source?: "user" | "timeout" }>) {
  const asked: Question[] = []
  const questions = {
    inquire: async (_caller: unknown, _key: string, question: Question) => {
      asked.push(question)
      const { answer, source = "user" } = await answers(question)
      return { answer, source }
    },
  }
  return { asked, extra: { questions, permit: async () => true } as unknown as Partial<ToolContext> }
}

/** The protocol server's mcp.json entry on stdio, Streamable HTTP and the old HTTP+SSE. */
export const transports: Array<[string, () => Promise<unknown>]> = [
  ["stdio", async () => ({ command: process.execPath, args: ["--import", TSX, PROTOCOL_STDIO] })],
  ["Streamable HTTP", async () => ({ url: (await httpServer({ protocol: true })).url })],
  ["SSE", async () => ({ type: "sse", url: (await httpServer({ protocol: true, legacySse: true })).url })],
]
