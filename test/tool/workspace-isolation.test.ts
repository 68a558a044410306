/**
 * Each user's tasks work in a workspace of their own, held to a size quota, and no error a file
 * tool reports names an absolute host path.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { z } from "zod"
import { ConfigError, loadConfig } from "../../src/config/config.ts"
import { folderName } from "../../src/memory/slug.ts"
import { listFilesTool } from "../../src/tool/list-files.ts"
import { readFileTool } from "../../src/tool/read-file.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import { ToolError, type ToolContext, type ToolDefinition } from "../../src/tool/tool.ts"
import { fsError } from "../../src/tool/workspace.ts"
import { createWriteFileTool } from "../../src/tool/write-file.ts"

const ALICE = "slack:T1:U0ALICE"
const BOB = "telegram:2002"

let tmp: string
let root: string

beforeEach(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "steward-workspaces-"))
  root = path.join(tmp, "workspace")
})

afterEach(async () => {
  await rm(tmp, { recursive: true, force: true })
})

const as = (user: string): ToolContext => ({ role: "worker", agent: "default", conversation: `conv-${user}`, user, sessionId: "s", callId: "c", abort: new AbortController().signal, ...({ workspaceDir: root } as Capabilities) })
const run = <P extends z.ZodType>(tool: ToolDefinition<P>, args: unknown, ctx: ToolContext): Promise<any> => tool.execute(tool.parameters.parse(args), ctx)
/** The error a call fails with (it must fail with a ToolError). */
async function failure(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(ToolError)
  return (error as ToolError).message
}

describe("per-user workspaces", () => {
  const writeFileTool = createWriteFileTool({ quotaBytes: 1024 * 1024 })

  it("keeps each user's files apart: same names, separate files, nothing of the other's visible", async () => {
    await run(writeFileTool, { path: "notes.md", content: "alice's" }, as(ALICE))
    expect(await failure(run(readFileTool, { path: "notes.md" }, as(BOB)))).toBe("no such file: notes.md")
    await run(writeFileTool, { path: "notes.md", content: "bob's" }, as(BOB))
    expect((await run(readFileTool, { path: "notes.md" }, as(ALICE))).content).toBe("alice's")
    expect((await run(readFileTool, { path: "notes.md" }, as(BOB))).content).toBe("bob's")
    expect((await run(listFilesTool, { recursive: true }, as(BOB))).entries).toEqual([{ path: "notes.md", type: "file", size: 5 }])
    expect(await readFile(path.join(root, folderName(ALICE), "notes.md"), "utf8")).toBe("alice's")
  })

  it("refuses a way into another user's workspace: .., absolute paths and symlinks", async () => {
    await run(writeFileTool, { path: "secret.md", content: "alice's secret" }, as(ALICE))
    await run(writeFileTool, { path: "mine.md", content: "bob's" }, as(BOB))
    const alice = path.join(root, folderName(ALICE))
    const bob = path.join(root, folderName(BOB))
    await symlink(alice, path.join(bob, "to-alice"))
    await symlink(root, path.join(bob, "to-root"))
    for (const relPath of [`../${folderName(ALICE)}/secret.md`, path.join(alice, "secret.md"), "to-alice/secret.md", `to-root/${folderName(ALICE)}/secret.md`]) {
      await expect(run(readFileTool, { path: relPath }, as(BOB)), relPath).rejects.toThrow(ToolError)
      await expect(run(writeFileTool, { path: relPath, content: "overwritten" }, as(BOB)), relPath).rejects.toThrow(ToolError)
    }
    await expect(run(listFilesTool, { path: "to-alice" }, as(BOB))).rejects.toThrow(/outside the workspace/)
    expect(await readFile(path.join(alice, "secret.md"), "utf8")).toBe("alice's secret")
  })
})

describe("workspace quota (WORKSPACE_MAX_MB)", () => {
  const writeFileTool = createWriteFileTool({ quotaBytes: 1000 })

  it("is 500 MiB unless WORKSPACE_MAX_MB says otherwise; a bad value is a configuration error", () => {
    const base = { MODEL: "openai:gpt-4.1-mini", OPENAI_API_KEY: "k" }
    expect(loadConfig(base).workspace).toEqual({ quotaBytes: 500 * 1024 * 1024 })
    expect(loadConfig({ ...base, WORKSPACE_MAX_MB: "20" }).workspace).toEqual({ quotaBytes: 20 * 1024 * 1024 })
    expect(() => loadConfig({ ...base, WORKSPACE_MAX_MB: "0" })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, WORKSPACE_MAX_MB: "1.5" })).toThrow(/WORKSPACE_MAX_MB/)
  })

  it("refuses a write that would take the user's workspace over its quota, counting what a replace frees", async () => {
    await run(writeFileTool, { path: "a.txt", content: "a".repeat(600) }, as(ALICE))
    expect(await failure(run(writeFileTool, { path: "b.txt", content: "b".repeat(600) }, as(ALICE)))).toMatch(/^the workspace is full/)
    // Replacing a.txt frees its 600 bytes first.
    await run(writeFileTool, { path: "a.txt", content: "a".repeat(900) }, as(ALICE))
    expect(await failure(run(writeFileTool, { path: "a.txt", content: "a".repeat(200), append: true }, as(ALICE)))).toMatch(/^the workspace is full/)
    // Another user's quota is their own.
    await run(writeFileTool, { path: "b.txt", content: "b".repeat(900) }, as(BOB))
    expect((await run(listFilesTool, {}, as(ALICE))).entries).toEqual([{ path: "a.txt", type: "file", size: 900 }])
  })

  it("lets concurrent writes past the quota check one at a time", async () => {
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => run(writeFileTool, { path: `f${i}.txt`, content: "x".repeat(300) }, as(ALICE))))
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(3)
  })
})

describe("file tool errors name no host path", () => {
  const writeFileTool = createWriteFileTool({ quotaBytes: 1000 })

  it("words ENOENT, EISDIR, ENOTDIR, ELOOP, quota and escapes with the model's own path", async () => {
    const ctx = as(ALICE)
    const mine = path.join(root, folderName(ALICE))
    await run(writeFileTool, { path: "file.txt", content: "x" }, ctx)
    await mkdir(path.join(mine, "folder"))
    await symlink("loop-b", path.join(mine, "loop-a"))
    await symlink("loop-a", path.join(mine, "loop-b"))
    await symlink(path.join(tmp, "elsewhere"), path.join(mine, "dangling"))
    await symlink(tmp, path.join(mine, "out"))
    const messages = [
      await failure(run(readFileTool, { path: "missing.txt" }, ctx)),
      await failure(run(readFileTool, { path: "folder" }, ctx)),
      await failure(run(writeFileTool, { path: "folder", content: "x" }, ctx)),
      await failure(run(readFileTool, { path: "file.txt/below" }, ctx)),
      await failure(run(writeFileTool, { path: "file.txt/below", content: "x" }, ctx)),
      await failure(run(listFilesTool, { path: "missing" }, ctx)),
      await failure(run(readFileTool, { path: "loop-a" }, ctx)),
      await failure(run(writeFileTool, { path: "big.txt", content: "x".repeat(2000) }, ctx)),
      await failure(run(readFileTool, { path: "../../outside.txt" }, ctx)),
      await failure(run(readFileTool, { path: path.join(tmp, "outside.txt") }, ctx)),
      await failure(run(readFileTool, { path: "out/outside.txt" }, ctx)),
      await failure(run(writeFileTool, { path: "dangling", content: "x" }, ctx)),
    ]
    for (const message of messages) {
      expect(message).not.toContain(tmp)
      expect(message).not.toContain(tmpdir())
    }
    expect(messages.slice(0, 3)).toEqual(["no such file: missing.txt", "folder is a folder; use list_files", "folder is a folder, not a file"])
  })

  it("words permission errors without the path node reports", async () => {
    const ctx = as(BOB)
    await run(writeFileTool, { path: "locked.txt", content: "x" }, ctx)
    const locked = path.join(root, folderName(BOB), "locked.txt")
    await chmod(locked, 0o000)
    // Root reads a 0o000 file anyway; whoever runs this, the message has no host path.
    const read = await run(readFileTool, { path: "locked.txt" }, ctx).then(
      () => "read",
      (error: Error) => error.message,
    )
    expect(read === "read" || read === "permission denied: locked.txt").toBe(true)
    // The same wording for every errno node reports with an absolute path in its message.
    for (const code of ["EACCES", "EPERM", "ENOENT", "EISDIR", "ENOSPC", "EMFILE", "EROFS"]) {
      const nodeError = Object.assign(new Error(`${code}: failed, open '${locked}'`), { code, path: locked })
      const worded = fsError(nodeError, "locked.txt")
      expect(worded).toBeInstanceOf(ToolError)
      expect(worded.message, code).not.toContain(root)
      expect(worded.message, code).toContain("locked.txt")
    }
    expect(fsError(new Error(`something odd at ${locked}`), "locked.txt").message).toBe("locked.txt: the file operation failed")
  })
})
