import { existsSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import type { CompletionRequest } from "../../src/tool/capabilities.ts"
import { createReadResourceTool } from "../../src/tool/read-resource.ts"
import type { ToolContext, ToolDefinition } from "../../src/tool/tool.ts"
import { userWorkspaceDir } from "../../src/tool/workspace.ts"
import { startMcpHttpServer } from "../fakes/mcp-http.ts"
import { TINY_PNG } from "../fakes/mcp-protocol.ts"
import { asker, httpServer, startHub, transports } from "./protocol-support.ts"
import { callTool, testWorkspace } from "./support.ts"

// The client side of MCP against a small SDK-built server (test/fakes/mcp-protocol.ts), on stdio
// and Streamable HTTP: progress, changing tool lists, elicitation, sampling, roots, images and
// resources, task-only tools, instructions, session loss.

describe.each(transports)("over %s", (_name, entry) => {
  it("sends a progress token: progress resets the timeout and shows as the call's status, up to MCP_TOOL_MAX_SECONDS", async () => {
    // Reports every 250 ms against a 2 s timeout: a margin for a loaded machine's late timers.
    const { tool } = await startHub(await entry(), { toolTimeoutMs: 2_000, toolMaxMs: 60_000 })
    const shown: string[] = []
    // 16 × 250 ms = 4 s, twice the timeout.
    const result = await callTool(tool("proto_slow"), { steps: 16, stepMs: 250 }, undefined, { progress: (text: string) => void shown.push(text) })
    expect(result).toEqual({ text: "done after 16 steps" })
    // Paced to one status a second: the first report at once, then the newest.
    expect(shown[0]).toBe("1/16")
    expect(shown.length).toBeLessThanOrEqual(6)
    expect(shown).toEqual(shown.map((text) => expect.stringMatching(/^\d+\/16$/)))
    const capped = await startHub(await entry(), { toolTimeoutMs: 2_000, toolMaxMs: 3_000 })
    await expect(callTool(capped.tool("proto_slow"), { steps: 40, stepMs: 250 })).rejects.toThrow("proto_slow was still running after 3 s (MCP_TOOL_MAX_SECONDS); the call was cancelled")
  })

  it("re-lists the tools on tools/list_changed: one added is offered, one removed is not", async () => {
    const { hub, tool, ids } = await startHub(await entry())
    expect(ids()).not.toContain("proto_extra")
    await callTool(tool("proto_grow"), {})
    await hub.families()[0]!.settled!()
    await expect.poll(ids, { timeout: 5_000 }).toContain("proto_extra")
    expect(await callTool(tool("proto_extra"), {})).toEqual({ text: "extra here" })
    await callTool(tool("proto_shrink"), {})
    await expect.poll(ids, { timeout: 5_000 }).not.toContain("proto_extra")
  })

  it("leaves out a tool that only runs as an MCP task, and keeps titles, annotations and instructions", async () => {
    const { hub, tool, ids } = await startHub(await entry())
    expect(ids()).not.toContain("proto_task_only")
    expect(tool("proto_media")).toMatchObject({ readOnly: true, description: expect.stringMatching(/^Media: /) })
    expect(tool("proto_slow").readOnly).toBe(false)
    expect(hub.instructions()).toContain("Always call proto_slow with steps of at least 2.")
  })

  it("turns elicitation into questions: buttons for a choice and a yes/no, typed answers checked against the schema", async () => {
    const { tool } = await startHub(await entry())
    let nameTries = 0
    const { asked, extra } = asker((q) => {
      if (q.question.includes("*Colour*")) return { answer: "green" }
      if (q.question.includes("*Agree*")) return { answer: "Yes" }
      if (q.question.includes("*Name*")) return { answer: nameTries++ === 0 ? "A" : "Ada" }
      return { answer: "36" }
    })
    const result = await callTool(tool("proto_ask"), {}, undefined, extra)
    expect(JSON.parse(result.text)).toEqual({ action: "accept", content: { colour: "green", agree: true, name: "Ada", age: 36 } })
    expect(asked[0]!.question).toMatch(/^The MCP server “proto” asks: Tell me about you/)
    expect(asked[0]!.options).toEqual(["red", "green", "Decline"])
    expect(asked[1]!.options).toEqual(["Yes", "No", "Decline"])
    expect(asked[2]!.options).toBeUndefined()
    expect(asked[3]!.question).toMatch(/^That does not fit: /)
  })

  it("sends decline on Decline and cancel when no answer comes; a denied server gets decline without a question", async () => {
    const { tool } = await startHub(await entry())
    const declined = asker(() => ({ answer: "Decline" }))
    expect(JSON.parse((await callTool(tool("proto_ask"), {}, undefined, declined.extra)).text)).toEqual({ action: "decline" })
    const silent = asker(() => ({ answer: "", source: "timeout" }))
    expect(JSON.parse((await callTool(tool("proto_ask"), {}, undefined, silent.extra)).text)).toEqual({ action: "cancel" })
    const denied = asker(() => ({ answer: "green" }))
    const permitted: string[] = []
    const permit = async (permission: string, pattern: string) => (permitted.push(`${permission} ${pattern}`), false)
    expect(JSON.parse((await callTool(tool("proto_ask"), {}, undefined, { ...denied.extra, permit })).text)).toEqual({ action: "decline" })
    expect(denied.asked).toEqual([])
    expect(permitted).toEqual(["mcp_elicitation proto"])
  })

  it("answers sampling with the calling run's model under mcp_sampling, within the request's token limit", async () => {
    const { tool } = await startHub(await entry())
    const requests: CompletionRequest[] = []
    const permitted: string[] = []
    const extra = {
      permit: async (permission: string, pattern: string) => (permitted.push(`${permission} ${pattern}`), true),
      complete: async (request: CompletionRequest) => (requests.push(request), { text: "hi!", model: "fake:model", finishReason: "stop" }),
    }
    const result = JSON.parse((await callTool(tool("proto_sample"), {}, undefined, extra)).text)
    expect(result).toMatchObject({ role: "assistant", content: { type: "text", text: "hi!" }, model: "fake:model", stopReason: "endTurn" })
    expect(requests).toEqual([{ system: "Be brief", messages: [{ role: "user", content: [{ type: "text", text: "Say hi" }] }], maxOutputTokens: 17 }])
    expect(permitted).toEqual(["mcp_sampling proto"])
    const refused = { ...extra, permit: async () => false }
    await expect(callTool(tool("proto_sample"), {}, undefined, refused)).rejects.toThrow(/did not allow proto to use the model/)
  })

  it("declares one root, the calling user's workspace, and tells the server when it changes", async () => {
    const { tool } = await startHub(await entry())
    const first = JSON.parse((await callTool(tool("proto_roots"), {})).text)
    expect(first).toEqual([{ uri: pathToFileURL(userWorkspaceDir(testWorkspace, "test:u1")).href, name: "workspace" }])
    expect((await callTool(tool("proto_roots_changed"), {})).text).toBe("0")
    const second = JSON.parse((await callTool(tool("proto_roots"), {}, undefined, { user: "test:u2" } as Partial<ToolContext>)).text)
    expect(second).toEqual([{ uri: pathToFileURL(userWorkspaceDir(testWorkspace, "test:u2")).href, name: "workspace" }])
    expect((await callTool(tool("proto_roots_changed"), {}, undefined, { user: "test:u2" } as Partial<ToolContext>)).text).toBe("1")
  })

  it("saves images in the user's workspace, keeps resource URIs, sends content meant for the user to them, and reads resources", async () => {
    const { hub, tool } = await startHub(await entry())
    const replies: string[] = []
    const extra = { replies: { reply: async (_caller: unknown, text: string) => void replies.push(text), sendFile: async () => {} } } as unknown as Partial<ToolContext>
    const result = await callTool(tool("proto_media"), {}, undefined, extra)
    const saved = /saved as (mcp\/proto\/\S+\.png)/.exec(result.text)?.[1]
    expect(saved).toBeDefined()
    const file = join(userWorkspaceDir(testWorkspace, "test:u1"), saved!)
    expect(readFileSync(file)).toEqual(Buffer.from(TINY_PNG, "base64"))
    expect(result.images).toEqual([{ path: file, mediaType: "image/png" }])
    expect(result.text).toContain("[resource memo://one (text/plain)]\nthe memo")
    expect(result.text).toContain("[resource link memo://two: second memo]")
    expect(result.text).not.toContain("For your eyes only")
    expect(replies).toEqual(["For your eyes only"])
    const readResource = createReadResourceTool(hub)
    expect(await callTool(readResource, { server: "proto", uri: "memo://two" })).toEqual({ text: "[resource memo://two (text/plain)]\nsecond memo's text" })
    const picture = await callTool(readResource, { server: "proto", uri: "memo://picture" })
    expect(picture.images).toHaveLength(1)
    expect(existsSync(picture.images[0].path)).toBe(true)
    await expect(callTool(readResource, { server: "nope", uri: "memo://two" })).rejects.toThrow(/no MCP server "nope"/)
  })
})

describe("a Streamable HTTP server", () => {
  it("restarted while idle is reconnected with a new session, and the call succeeds", async () => {
    const first = await startMcpHttpServer({ protocol: true })
    const { hub, tool } = await startHub({ url: first.url })
    await first.close()
    await httpServer({ protocol: true, port: first.port })
    expect(await callTool(tool("proto_roots"), {})).toMatchObject({ text: expect.stringContaining("workspace") })
    expect(hub.health()[0]).toMatchObject({ name: "proto", state: "up" })
  })

  it("that dies mid-call fails the call within 3 s", async () => {
    const server = await startMcpHttpServer({ protocol: true })
    const { hub, tool } = await startHub({ url: server.url }, { toolTimeoutMs: 15_000 })
    let reported = false
    const call = callTool(tool("proto_slow"), { steps: 100, stepMs: 100 }, undefined, { progress: () => void (reported = true) })
    // Closed once the call is under way (its first progress report has come).
    await expect.poll(() => reported, { timeout: 5_000 }).toBe(true)
    const started = Date.now()
    await server.close()
    await expect(call).rejects.toThrow(/proto_slow/)
    expect(Date.now() - started).toBeLessThan(3_300)
    expect(hub.health()[0]!.state).not.toBe("up")
  })
})

const reference = (pkg: string, ...args: string[]) => ({ command: process.execPath, args: [new URL(`../../node_modules/@modelcontextprotocol/${pkg}/dist/index.js`, import.meta.url).pathname, ...args] })

describe("the reference servers", () => {
  it("server-everything: its client-capability tools are offered, the task-only one is not; progress, images, sampling and roots work", async () => {
    const { ids, tool } = await startHub(reference("server-everything", "stdio"), { toolTimeoutMs: 1_000, toolMaxMs: 10_000 })
    expect(ids()).toEqual(expect.arrayContaining(["proto_get-roots-list", "proto_trigger-elicitation-request", "proto_trigger-sampling-request", "proto_trigger-long-running-operation"]))
    expect(ids()).not.toContain("proto_simulate-research-query")
    const shown: string[] = []
    const long = await callTool(tool("proto_trigger-long-running-operation"), { duration: 2.4, steps: 4 }, undefined, { progress: (text: string) => void shown.push(text) })
    expect(long.text).toContain("Long running operation completed")
    // Paced to one status a second (and the last report may come after the result).
    expect(shown[0]).toBe("1/4")
    expect((await callTool(tool("proto_get-tiny-image"), {})).images).toHaveLength(1)
    const complete = async () => ({ text: "sampled!", model: "fake:model", finishReason: "stop" })
    expect((await callTool(tool("proto_trigger-sampling-request"), { prompt: "hi", maxTokens: 20 }, undefined, { permit: async () => true, complete })).text).toContain("sampled!")
    expect((await callTool(tool("proto_get-roots-list"), {})).text).toContain(pathToFileURL(userWorkspaceDir(testWorkspace, "test:u1")).href)
  })

  it("server-filesystem: the roots it is given, the user's workspace, replace its folders", async () => {
    const { tool } = await startHub(reference("server-filesystem", tmpdir()))
    await callTool(tool("proto_list_allowed_directories"), {})
    await expect.poll(async () => (await callTool(tool("proto_list_allowed_directories"), {})).text, { timeout: 5_000 }).toContain(userWorkspaceDir(testWorkspace, "test:u1"))
  })

  it("server-memory: its tools are offered with their annotations", async () => {
    const { tool } = await startHub({ ...reference("server-memory"), env: { MEMORY_FILE_PATH: join(testWorkspace, "memory.jsonl") } })
    expect(tool("proto_read_graph").readOnly).toBe(true)
    expect(tool("proto_create_entities").readOnly).toBe(false)
  })
})
