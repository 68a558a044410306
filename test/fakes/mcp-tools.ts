/** The tools of the MCP servers written for the tests (stdio and HTTP serve the same set). */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"

export interface FakeMcpOptions {
  /** Called by the `crash` tool; the stdio server exits, an HTTP one may stop listening. */
  crash?: () => void
}

export function fakeMcpServer(options: FakeMcpOptions = {}): McpServer {
  const server = new McpServer({ name: "fake-mcp", version: "1.0.0" })
  const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })
  server.registerTool("echo", { description: "Echoes the text back.", inputSchema: { text: z.string() } }, async ({ text: value }) => text(`echo: ${value}`))
  server.registerTool("add", { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => text(String(a + b)))
  server.registerTool("env", { description: "The server's FAKE_GREETING variable and working folder." }, async () =>
    text(`${process.env.FAKE_GREETING ?? "(unset)"} in ${process.cwd()}; OPENAI_API_KEY ${process.env.OPENAI_API_KEY === undefined ? "unset" : "set"}`),
  )
  server.registerTool("big", { description: "A result of 50,000 characters." }, async () => text("x".repeat(50_000)))
  server.registerTool("fail", { description: "Reports an error." }, async () => ({ isError: true, content: [{ type: "text" as const, text: "the fake failed on purpose" }] }))
  server.registerTool("hang", { description: "Never answers." }, () => new Promise(() => {}))
  server.registerTool("crash", { description: "Makes the server die." }, async () => {
    options.crash?.()
    return text("crashing")
  })
  // Dots are fine in MCP names but not in a model provider's.
  server.registerTool("clock.now", { description: "A name that needs sanitising." }, async () => text("noon"))
  return server
}
