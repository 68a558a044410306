/**
 * An MCP server for the protocol tests (stdio: mcp-protocol-stdio.ts; HTTP: startMcpHttpServer
 * with `protocol`): progress, a tool list that changes, questions to the user (elicitation),
 * sampling, roots, images, resources, content for the user, a task-only tool, instructions.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"

/** A 1×1 PNG. */
export const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

export function protocolMcpServer(instructions = "Always call proto_slow with steps of at least 2."): McpServer {
  const server = new McpServer({ name: "fake-protocol", version: "1.0.0" }, { instructions, capabilities: { tools: { listChanged: true } } })
  const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })
  server.registerTool(
    "slow",
    { description: "Takes `steps` × `stepMs`, reporting progress after each step.", inputSchema: { steps: z.number(), stepMs: z.number() } },
    async ({ steps, stepMs }, extra) => {
      for (let i = 1; i <= steps; i++) {
        await new Promise((resolve) => setTimeout(resolve, stepMs))
        const token = extra._meta?.progressToken
        if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps } })
      }
      return text(`done after ${steps} steps`)
    },
  )
  server.registerTool(
    "flood",
    { description: "Sends `count` progress reports at once (no total, a fraction, a message), then answers.", inputSchema: { count: z.number() } },
    async ({ count }, extra) => {
      const token = extra._meta?.progressToken
      for (let i = 1; i <= count && token !== undefined; i++) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i / 4, message: `chunk ${i}` } })
      return text(`flooded ${count}`)
    },
  )
  let cancelled = 0
  server.registerTool("wait", { description: "Reports progress once, then waits until it is cancelled." }, async (extra) => {
    const token = extra._meta?.progressToken
    if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 1 } })
    await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }))
    cancelled++
    return text("cancelled")
  })
  server.registerTool("cancellations", { description: "How many calls of `wait` the client cancelled." }, async () => text(String(cancelled)))
  server.registerTool("ask_name", { description: "Asks the user for their name." }, async (ctx) => {
    const result = await server.server.elicitInput(
      { message: "Who are you?", requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] } },
      { relatedRequestId: ctx.requestId },
    )
    return text(JSON.stringify(result))
  })
  let extra: ReturnType<McpServer["registerTool"]> | undefined
  server.registerTool("grow", { description: "Adds the tool `extra` (and announces the change)." }, async () => {
    extra ??= server.registerTool("extra", { description: "Appeared at run time." }, async () => text("extra here"))
    return text("grown")
  })
  server.registerTool("shrink", { description: "Removes the tool `extra`." }, async () => {
    extra?.remove()
    extra = undefined
    return text("shrunk")
  })
  server.registerTool("ask", { description: "Asks the user for a colour, a yes/no, a name and an age." }, async (ctx) => {
    const result = await server.server.elicitInput(
      {
        message: "Tell me about you",
        requestedSchema: {
          type: "object",
          properties: {
            colour: { type: "string", title: "Colour", enum: ["red", "green"] },
            agree: { type: "boolean", title: "Agree" },
            name: { type: "string", title: "Name", minLength: 2 },
            age: { type: "integer", title: "Age", minimum: 0, maximum: 150 },
          },
          required: ["colour", "agree", "name", "age"],
        },
      },
      { relatedRequestId: ctx.requestId },
    )
    return text(JSON.stringify(result))
  })
  server.registerTool("sample", { description: "Asks the client's model to complete a prompt." }, async (ctx) => {
    const result = await server.server.createMessage({ messages: [{ role: "user", content: { type: "text", text: "Say hi" } }], maxTokens: 17, systemPrompt: "Be brief" }, { relatedRequestId: ctx.requestId })
    return text(JSON.stringify(result))
  })
  server.registerTool("roots", { description: "Lists the client's roots.", annotations: { readOnlyHint: true } }, async (ctx) => text(JSON.stringify((await server.server.listRoots(undefined, { relatedRequestId: ctx.requestId })).roots)))
  let rootsChanged = 0
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => void rootsChanged++)
  server.registerTool("roots_changed", { description: "How often the client said its roots changed." }, async () => text(String(rootsChanged)))
  server.registerTool("media", { description: "An image, an embedded resource, a resource link and a note for the user.", annotations: { readOnlyHint: true, title: "Media" } }, async () => ({
    content: [
      { type: "image" as const, data: TINY_PNG, mimeType: "image/png" },
      { type: "resource" as const, resource: { uri: "memo://one", mimeType: "text/plain", text: "the memo" } },
      { type: "resource_link" as const, uri: "memo://two", name: "second memo" },
      { type: "text" as const, text: "For your eyes only", annotations: { audience: ["user" as const] } },
    ],
  }))
  server.registerTool("media_variants", { description: "An SVG, audio and an embedded PDF." }, async () => ({
    content: [
      { type: "image" as const, data: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>").toString("base64"), mimeType: "image/svg+xml" },
      { type: "audio" as const, data: Buffer.from("RIFF....WAVE").toString("base64"), mimeType: "audio/wav" },
      { type: "resource" as const, resource: { uri: "file:///report.pdf", mimeType: "application/pdf", blob: Buffer.from("%PDF-1.4").toString("base64") } },
    ],
  }))
  server.registerResource("memo-two", "memo://two", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "second memo's text" }] }))
  server.registerResource("picture", "memo://picture", { mimeType: "image/png" }, async (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: TINY_PNG }] }))
  server.registerTool("churn", { description: "Announces `count` tool list changes at once.", inputSchema: { count: z.number() } }, async ({ count }) => {
    for (let i = 0; i < count; i++) server.sendToolListChanged()
    return text("churned")
  })
  // How often the client listed the tools (the SDK's own handler, counted).
  let listings = 0
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, (...args: unknown[]) => unknown> })._requestHandlers
  const list = handlers.get("tools/list")!
  handlers.set("tools/list", (...args) => (listings++, list(...args)))
  server.registerTool("listings", { description: "How often the client listed the tools." }, async () => text(String(listings)))
  // Only callable as an MCP task: a client without the tasks API must not offer it.
  server.registerTool("task_only", { description: "Runs only as a task." }, async () => text("never")).execution = { taskSupport: "required" }
  return server
}
