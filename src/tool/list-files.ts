import { lstat, readdir, stat } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { defineTool, ToolError } from "./tool.ts"
import { fsError, pathPattern, userWorkspace, workspacePath, workspaceRelative } from "./workspace.ts"

// Enough to see the shape of a project; a bigger listing would flood the model's context.
const MAX_ENTRIES = 1000

interface Entry {
  path: string
  type: "file" | "dir"
  size: number
}

const parameters = z.object({
  path: z.string().optional().describe('Folder relative to the workspace (default ".", the workspace itself).'),
  recursive: z.boolean().optional().describe("Also list everything inside subfolders (default false)."),
})

export const listFilesTool = defineTool({
  id: "list_files",
  description:
    "List files and folders in a workspace folder, optionally recursively. Paths are relative to the " +
    `workspace, sorted, each folder followed by its contents. At most ${MAX_ENTRIES} entries; ` +
    "truncated says whether more exist. Symlinks are not listed.",
  parameters,
  pattern: (args) => pathPattern(args.path ?? "."),
  async execute({ path: relPath = ".", recursive = false }, ctx) {
    const dir = await workspacePath(ctx, relPath)
    const entries: Entry[] = []
    let truncated = false

    const walk = async (folder: string): Promise<void> => {
      const children = await readdir(folder, { withFileTypes: true })
      children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      for (const child of children) {
        ctx.abort.throwIfAborted()
        // Symlinks are skipped rather than followed: following could loop or leave the workspace.
        if (!child.isFile() && !child.isDirectory()) continue
        if (entries.length === MAX_ENTRIES) {
          truncated = true
          return
        }
        const abs = path.join(folder, child.name)
        const isDir = child.isDirectory()
        entries.push({
          path: workspaceRelative(userWorkspace(ctx), abs),
          type: isDir ? "dir" : "file",
          size: isDir ? 0 : (await lstat(abs)).size,
        })
        if (isDir && recursive) {
          await walk(abs)
          if (truncated) return
        }
      }
    }

    try {
      if (!(await stat(dir)).isDirectory()) throw new ToolError(`${relPath} is a file, not a folder; use read_file`)
      await walk(dir)
    } catch (err) {
      throw fsError(err, relPath)
    }
    return { entries, truncated }
  },
})
