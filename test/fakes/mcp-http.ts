/**
 * MCP servers over HTTP for the tests, on 127.0.0.1: Streamable HTTP (stateless: a fresh MCP
 * server per request) at /mcp, or, with `legacySse`, the old HTTP+SSE transport (GET /sse,
 * POST /messages) that only older servers speak. A `token` makes every request need
 * `Authorization: Bearer <token>`. With `protocol`, the protocol test server with sessions (on
 * either transport).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { randomUUID } from "node:crypto"
import { protocolMcpServer } from "./mcp-protocol.ts"
import { fakeMcpServer } from "./mcp-tools.ts"

export interface FakeMcpHttp {
  /** The URL to put in mcp.json. */
  url: string
  port: number
  /** Requests by method and path, e.g. "POST /mcp". */
  requests: string[]
  close(): Promise<void>
}

export async function startMcpHttpServer(options: { token?: string; legacySse?: boolean; port?: number; protocol?: boolean } = {}): Promise<FakeMcpHttp> {
  const requests: string[] = []
  const sse = new Map<string, SSEServerTransport>()
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url?.split("?")[0]}`)
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return void res.writeHead(401).end("unauthorized")
    handle(req, res).catch(() => res.headersSent || res.writeHead(500).end())
  })
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url?.split("?")[0]
    if (options.protocol && !options.legacySse && path === "/mcp") return handleSession(req, res)
    if (!options.legacySse && path === "/mcp") {
      const mcp = fakeMcpServer()
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
      res.on("close", () => void transport.close().then(() => mcp.close()))
      await mcp.connect(transport)
      return transport.handleRequest(req, res)
    }
    if (options.legacySse && req.method === "GET" && path === "/sse") {
      const transport = new SSEServerTransport("/messages", res)
      sse.set(transport.sessionId, transport)
      res.on("close", () => sse.delete(transport.sessionId))
      return (options.protocol ? protocolMcpServer() : fakeMcpServer()).connect(transport)
    }
    if (options.legacySse && req.method === "POST" && path === "/messages") {
      const transport = sse.get(new URL(req.url!, "http://x").searchParams.get("sessionId") ?? "")
      if (transport) return transport.handlePostMessage(req, res)
    }
    res.writeHead(404).end("not found")
  }
  /** With sessions (the protocol server asks the client questions, which need them): a session
   *  unknown to this server (one before a restart) gets 404, as the protocol says. */
  async function handleSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = req.headers["mcp-session-id"]
    const known = typeof id === "string" ? sessions.get(id) : undefined
    if (known) return known.handleRequest(req, res)
    if (typeof id === "string") return void res.writeHead(404).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }))
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, transport) })
    await protocolMcpServer().connect(transport)
    return transport.handleRequest(req, res)
  }
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}${options.legacySse ? "/sse" : "/mcp"}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
