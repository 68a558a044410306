import { randomBytes } from "node:crypto"
import { appendFile, mkdir, rename, rm, stat, writeFile } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { defineTool, ToolError } from "./tool.ts"
import { fsError, MAX_FILE_BYTES, pathPattern, workspacePath, workspaceRelative } from "./workspace.ts"

const parameters = z.object({
  path: z.string().describe("File path relative to the workspace; missing folders are created."),
  content: z.string().describe("Text to write (UTF-8)."),
  append: z.boolean().optional().describe("Add to the end of the file instead of replacing it (default false)."),
})

export const writeFileTool = defineTool({
  id: "write_file",
  description:
    "Write a text file in the workspace, replacing it unless append is true. Creates missing folders. " +
    "Returns the path and the number of bytes written. Content is limited to 5 MiB.",
  parameters,
  pattern: (args) => pathPattern(args.path),
  async execute({ path: relPath, content, append = false }, ctx) {
    const bytes = Buffer.byteLength(content)
    if (bytes > MAX_FILE_BYTES) {
      throw new ToolError(`content is ${bytes} bytes, over the ${MAX_FILE_BYTES} byte limit of write_file`)
    }
    const file = await workspacePath(ctx, relPath)
    try {
      // Checked up front: replacing the workspace root would otherwise put the temp file beside it.
      if ((await stat(file).catch(() => undefined))?.isDirectory()) {
        throw new ToolError(`${relPath} is a folder, not a file`)
      }
      await mkdir(path.dirname(file), { recursive: true })
      if (append) await appendFile(file, content)
      else await replaceAtomically(file, content, ctx.abort)
    } catch (err) {
      throw fsError(err, relPath)
    }
    return { path: workspaceRelative(ctx.workspaceDir, file), bytes }
  },
})

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
