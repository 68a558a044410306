import { mkdtemp, mkdir, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createFetchUrlTool } from "../../src/tool/fetch-url.ts"
import { allowHostsSchema } from "../../src/web/address-policy.ts"
import { listFilesTool } from "../../src/tool/list-files.ts"
import { readFileTool } from "../../src/tool/read-file.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { ToolError, type ToolContext, type ToolDefinition } from "../../src/tool/tool.ts"
import { resolveInWorkspace } from "../../src/tool/workspace.ts"
import { createWriteFileTool } from "../../src/tool/write-file.ts"
import { folderName } from "../../src/memory/slug.ts"
import type { z } from "zod"

function context(workspaceDir: string, abort = new AbortController().signal): ToolContext {
  return {
    role: "worker",
    agent: "default",
    conversation: "conv",
    user: "user",
    sessionId: "session",
    callId: "call",
    abort,
    ...({ workspaceDir } as Capabilities),
  }
}

const writeFileTool = createWriteFileTool({ quotaBytes: 500 * 1024 * 1024 })

// The test servers listen on 127.0.0.1, which fetch_url reaches only when the operator allows it.
const fetchUrlTool = createFetchUrlTool({ maxBytes: 5 * 1024 * 1024, allowHosts: allowHostsSchema.parse("127.0.0.1") })

/** Parses the arguments like the runtime does, so schema defaults and limits apply. */
function run<P extends z.ZodType>(tool: ToolDefinition<P>, args: unknown, ctx: ToolContext): Promise<any> {
  return tool.execute!(tool.parameters.parse(args), ctx)
}

describe("fetch_url", () => {
  let server: Server
  let base: string
  const ctx = context(tmpdir())

  beforeAll(async () => {
    server = createServer((req, res) => {
      switch (req.url) {
        case "/page":
          res.setHeader("content-type", "text/html; charset=utf-8")
          res.end(
            '<html><head><title>T</title><script>var secret = 1</script></head><body><h1>Hello</h1>' +
              '<p>Read <a href="/elsewhere">the docs</a> <img src="x.png" alt="a picture"></p></body></html>',
          )
          return
        case "/data":
          res.setHeader("content-type", "application/json")
          res.end(JSON.stringify({ answer: 42 }))
          return
        case "/redirect":
          res.writeHead(302, { location: "/page" })
          res.end()
          return
        case "/loop":
          res.writeHead(302, { location: "/loop" })
          res.end()
          return
        case "/missing":
          res.writeHead(404, { "content-type": "text/plain" })
          res.end("not here")
          return
        case "/endless": {
          // Never ends on its own: the test only finishes if the tool stops reading.
          res.setHeader("content-type", "text/plain")
          const chunk = Buffer.alloc(64 * 1024, "a")
          const pump = () => {
            while (!res.destroyed && res.write(chunk));
          }
          res.on("drain", pump)
          pump()
          return
        }
        case "/image":
          res.setHeader("content-type", "image/png")
          res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]))
          return
        case "/slow":
          return // never answers
        default:
          res.writeHead(500).end()
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it("turns HTML into readable text", async () => {
    const result = await run(fetchUrlTool, { url: `${base}/page` }, ctx)
    expect(result).toMatchObject({ url: `${base}/page`, status: 200, truncated: false })
    expect(result.contentType).toContain("text/html")
    expect(result.text).toContain("HELLO")
    expect(result.text).toContain("Read the docs")
    expect(result.text).not.toMatch(/<|elsewhere|picture|secret/)
  })

  it("returns JSON as text", async () => {
    const result = await run(fetchUrlTool, { url: `${base}/data` }, ctx)
    expect(JSON.parse(result.text)).toEqual({ answer: 42 })
  })

  it("follows redirects and reports the final URL", async () => {
    const result = await run(fetchUrlTool, { url: `${base}/redirect` }, ctx)
    expect(result.url).toBe(`${base}/page`)
    expect(result.text).toContain("HELLO")
  })

  it("gives up on redirect loops", async () => {
    await expect(run(fetchUrlTool, { url: `${base}/loop` }, ctx)).rejects.toThrow(/redirected more than 5 times/)
  })

  it("returns error statuses with their body", async () => {
    const result = await run(fetchUrlTool, { url: `${base}/missing` }, ctx)
    expect(result).toMatchObject({ status: 404, text: "not here", truncated: false })
  })

  it("stops reading an oversized body and says so", async () => {
    const result = await run(fetchUrlTool, { url: `${base}/endless`, maxChars: 100_000 }, ctx)
    expect(result.truncated).toBe(true)
    expect(result.text).toHaveLength(100_000)
  }, 10_000)

  it("cuts the text to maxChars", async () => {
    const result = await run(fetchUrlTool, { url: `${base}/missing`, maxChars: 3 }, ctx)
    expect(result).toMatchObject({ text: "not", truncated: true })
  })

  it("stops when the run is aborted", async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error("run cancelled")), 100)
    const started = Date.now()
    await expect(run(fetchUrlTool, { url: `${base}/slow` }, context(tmpdir(), controller.signal))).rejects.toThrow(
      "run cancelled",
    )
    expect(Date.now() - started).toBeLessThan(5_000)
  }, 10_000)

  it("refuses binary content", async () => {
    await expect(run(fetchUrlTool, { url: `${base}/image` }, ctx)).rejects.toThrow(/image\/png.*not text/)
  })

  it("refuses URLs that are not http or https", async () => {
    await expect(run(fetchUrlTool, { url: "file:///etc/passwd" }, ctx)).rejects.toThrow(ToolError)
    await expect(run(fetchUrlTool, { url: "not a url" }, ctx)).rejects.toThrow(/not a valid absolute URL/)
  })

  it("reports network errors with their cause", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    await expect(run(fetchUrlTool, { url: `http://127.0.0.1:${port}/` }, ctx)).rejects.toThrow(/ECONNREFUSED/)
  })

  it("matches permissions on the URL", () => {
    expect(fetchUrlTool.pattern!({ url: "https://example.com/a" }, "worker")).toBe("https://example.com/a")
  })
})

describe("workspace file tools", () => {
  let tmp: string
  let workspace: string
  let ctx: ToolContext

  beforeEach(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "steward-worker-tools-"))
    // Not created yet: the tools must make it on first use. The context's user ("user") has
    // their own folder under the workspace root; `workspace` is that folder.
    workspace = path.join(tmp, "workspace", folderName("user"))
    ctx = context(path.join(tmp, "workspace"))
    await writeFile(path.join(tmp, "outside.txt"), "secret")
  })

  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true })
  })

  it("refuses paths that leave the workspace", async () => {
    await mkdir(workspace, { recursive: true })
    await symlink(tmp, path.join(workspace, "link"))
    await symlink(path.join(tmp, "not-yet"), path.join(workspace, "dangling"))
    for (const bad of ["../../etc/passwd", "/etc/passwd", "a/../../x", "link/outside.txt", "dangling", "a\0b", ""]) {
      expect(() => resolveInWorkspace(workspace, bad), bad).toThrow(ToolError)
    }
    await expect(run(readFileTool, { path: "link/outside.txt" }, ctx)).rejects.toThrow(/outside the workspace/)
    await expect(run(writeFileTool, { path: "link/new.txt", content: "x" }, ctx)).rejects.toThrow(ToolError)
    await expect(run(writeFileTool, { path: "dangling", content: "x" }, ctx)).rejects.toThrow(/broken symlink/)
    expect(await readdir(tmp)).toEqual(["outside.txt", "workspace"])
  })

  it("allows paths that stay inside", async () => {
    expect(resolveInWorkspace(workspace, "a/../b/./c.txt")).toBe(path.join(workspace, "b", "c.txt"))
    expect(resolveInWorkspace(workspace, "..notes")).toBe(path.join(workspace, "..notes"))
  })

  it("writes and reads back, creating folders", async () => {
    const written = await run(writeFileTool, { path: "notes/deep/todo.md", content: "één\ntwee\n" }, ctx)
    expect(written).toEqual({ path: "notes/deep/todo.md", bytes: 11 })
    const read = await run(readFileTool, { path: "notes/deep/todo.md" }, ctx)
    expect(read).toEqual({ path: "notes/deep/todo.md", content: "één\ntwee", totalLines: 2, truncated: false })
    expect(await readdir(path.join(workspace, "notes/deep"))).toEqual(["todo.md"])
  })

  it("replaces or appends", async () => {
    await run(writeFileTool, { path: "log.txt", content: "old\n" }, ctx)
    await run(writeFileTool, { path: "log.txt", content: "one\n" }, ctx)
    await run(writeFileTool, { path: "log.txt", content: "two\n", append: true }, ctx)
    expect(await readFile(path.join(workspace, "log.txt"), "utf8")).toBe("one\ntwo\n")
  })

  it("refuses to write over a folder", async () => {
    await expect(run(writeFileTool, { path: ".", content: "x" }, ctx)).rejects.toThrow(/is a folder/)
  })

  it("pages through lines with offset and limit", async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`)
    await run(writeFileTool, { path: "ten.txt", content: lines.join("\n") }, ctx)
    expect(await run(readFileTool, { path: "ten.txt", offset: 3, limit: 2 }, ctx)).toMatchObject({
      content: "line 3\nline 4",
      totalLines: 10,
      truncated: true,
    })
    expect(await run(readFileTool, { path: "ten.txt", offset: 9 }, ctx)).toMatchObject({
      content: "line 9\nline 10",
      truncated: false,
    })
    await expect(run(readFileTool, { path: "ten.txt", offset: 11 }, ctx)).rejects.toThrow(/past the end/)
  })

  it("refuses binary files", async () => {
    await mkdir(workspace, { recursive: true })
    await writeFile(path.join(workspace, "blob.bin"), Buffer.from([1, 2, 0, 3]))
    await expect(run(readFileTool, { path: "blob.bin" }, ctx)).rejects.toThrow(/binary/)
  })

  it("names the missing file", async () => {
    await expect(run(readFileTool, { path: "nope.txt" }, ctx)).rejects.toThrow("no such file: nope.txt")
  })

  it("lists folders, recursively and sorted", async () => {
    await run(writeFileTool, { path: "b.txt", content: "bb" }, ctx)
    await run(writeFileTool, { path: "a/z.txt", content: "z" }, ctx)
    await run(writeFileTool, { path: "a/sub/y.txt", content: "yyy" }, ctx)
    await symlink(tmp, path.join(workspace, "link"))

    expect(await run(listFilesTool, {}, ctx)).toEqual({
      entries: [
        { path: "a", type: "dir", size: 0 },
        { path: "b.txt", type: "file", size: 2 },
      ],
      truncated: false,
    })
    expect(await run(listFilesTool, { path: "a", recursive: true }, ctx)).toEqual({
      entries: [
        { path: "a/sub", type: "dir", size: 0 },
        { path: "a/sub/y.txt", type: "file", size: 3 },
        { path: "a/z.txt", type: "file", size: 1 },
      ],
      truncated: false,
    })
    await expect(run(listFilesTool, { path: "b.txt" }, ctx)).rejects.toThrow(/not a folder/)
  })

  it("caps long listings", async () => {
    await mkdir(workspace, { recursive: true })
    await Promise.all(Array.from({ length: 1001 }, (_, i) => writeFile(path.join(workspace, `f${i}`), "")))
    const result = await run(listFilesTool, {}, ctx)
    expect(result.entries).toHaveLength(1000)
    expect(result.truncated).toBe(true)
  })

  it("matches permissions on the normalised relative path", () => {
    expect(readFileTool.pattern!({ path: "a/./x/../b.txt" }, "worker")).toBe("a/b.txt")
    expect(listFilesTool.pattern!({}, "worker")).toBe(".")
  })
})
