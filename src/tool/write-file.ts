import { randomBytes } from "node:crypto"
import { appendFile, lstat, mkdir, rename, rm, stat, writeFile } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { defineTool, ToolError, type ToolContext } from "./tool.ts"
import { fsError, MAX_FILE_BYTES, pathPattern, userWorkspace, workspacePath, workspaceRelative, workspaceUsage } from "./workspace.ts"

export interface WriteFileSettings {
  /** WORKSPACE_MAX_MB in bytes: how much one user's workspace may hold. */
  quotaBytes: number
}

const parameters = z.object({
  path: z.string().describe("File path relative to the workspace; missing folders are created."),
  content: z.string().describe("Text to write (UTF-8)."),
  append: z.boolean().optional().describe("Add to the end of the file instead of replacing it (default false)."),
})

const MB = 1024 * 1024

/** write_file, with each user's workspace held to `quotaBytes`. */
export function createWriteFileTool(settings: WriteFileSettings) {
  // Writes to one workspace run one at a time, so two cannot both pass the quota check.
  const lastWrite = new Map<string, Promise<void>>()
  const inTurn = async <T>(root: string, write: () => Promise<T>): Promise<T> => {
    const previous = lastWrite.get(root)
    let done!: () => void
    const mine = new Promise<void>((resolve) => (done = resolve))
    lastWrite.set(root, mine)
    await previous
    try {
      return await write()
    } finally {
      done()
      if (lastWrite.get(root) === mine) lastWrite.delete(root)
    }
  }

  return defineTool({
    id: "write_file",
    description:
      "Write a text file in the workspace, replacing it unless append is true. Creates missing folders. " +
      `Returns the path and the number of bytes written. Content is limited to 5 MiB, the whole workspace to ${Math.floor(settings.quotaBytes / MB)} MiB.`,
    parameters,
    pattern: (args) => pathPattern(args.path),
    // A new file is the run's own output; replacing or appending to one that exists changes what
    // the user keeps, which a run steered by what it read may not do unasked.
    guardedWhenTainted: (args, ctx) => existsIn(ctx, args.path),
    async execute({ path: relPath, content, append = false }, ctx) {
      const bytes = Buffer.byteLength(content)
      if (bytes > MAX_FILE_BYTES) {
        throw new ToolError(`content is ${bytes} bytes, over the ${MAX_FILE_BYTES} byte limit of write_file`)
      }
      const file = await workspacePath(ctx, relPath)
      const root = userWorkspace(ctx)
      await inTurn(root, async () => {
        try {
          // Checked up front: replacing the workspace root would otherwise put the temp file beside it.
          const existing = await stat(file).catch(() => undefined)
          if (existing?.isDirectory()) throw new ToolError(`${relPath} is a folder, not a file`)
          const after = (await workspaceUsage(root)) + bytes - (append ? 0 : ((await lstat(file).catch(() => undefined))?.size ?? 0))
          if (after > settings.quotaBytes) {
            throw new ToolError(`the workspace is full: this write would bring it to ${(after / MB).toFixed(1)} MiB of the ${(settings.quotaBytes / MB).toFixed(0)} MiB allowed; write less, or overwrite files that are no longer needed`)
          }
          await mkdir(path.dirname(file), { recursive: true })
          if (append) await appendFile(file, content)
          else await replaceAtomically(file, content, ctx.abort)
        } catch (err) {
          throw fsError(err, relPath)
        }
      })
      return { path: workspaceRelative(root, file), bytes }
    },
  })
}

/** Readers never see a half-written file, and a crash mid-write leaves the old one intact. */
async function replaceAtomically(file: string, content: string, signal: AbortSignal): Promise<void> {
  // Same folder, so the rename stays on one filesystem and is atomic.
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`)
  try {
    await writeFile(temp, content, { flag: "wx", signal })
    await rename(temp, file)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}

/** Whether `relPath` names something that exists in the caller's workspace (a path the tool
 *  would refuse is left to the tool). */
async function existsIn(ctx: ToolContext, relPath: string): Promise<boolean> {
  const file = await workspacePath(ctx, relPath).catch(() => undefined)
  return file !== undefined && (await lstat(file).then(() => true, () => false))
}
