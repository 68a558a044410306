import { open } from "node:fs/promises"
import { z } from "zod"
import { documentKind, documentText, MAX_DOCUMENT_BYTES } from "../document/document-text.ts"
import { ParseRefused } from "../untrusted/isolated.ts"
import { defineTool, ToolError } from "./tool.ts"
import { fsError, MAX_FILE_BYTES, pathPattern, userWorkspace, workspacePath, workspaceRelative } from "./workspace.ts"

const DEFAULT_LIMIT = 2000
// Same heuristic as git and grep: text files do not contain NUL bytes near the start.
const BINARY_SNIFF_BYTES = 8 * 1024

const parameters = z.object({
  path: z.string().describe("File path relative to the workspace."),
  offset: z.number().int().min(1).optional().describe("First line to return, counting from 1 (default 1)."),
  limit: z.number().int().min(1).optional().describe(`How many lines to return (default ${DEFAULT_LIMIT}).`),
})

export const readFileTool = defineTool({
  id: "read_file",
  description:
    "Read a text file from the workspace. Returns the requested lines, the file's total line count and " +
    "whether more lines follow; use offset and limit to page through long files. PDFs (with page markers) " +
    "and Word documents (.docx) are returned as their text. Other binary files and files over 5 MiB " +
    "(documents: 50 MiB) are refused.",
  parameters,
  pattern: (args) => pathPattern(args.path),
  untrustedOutput: true,
  async execute({ path: relPath, offset = 1, limit = DEFAULT_LIMIT }, ctx) {
    const file = await workspacePath(ctx, relPath)
    const kind = documentKind(relPath)
    const data = await readSmallFile(file, relPath, ctx.abort, kind ? MAX_DOCUMENT_BYTES : MAX_FILE_BYTES)
    if (!kind && data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
      throw new ToolError(`${relPath} is a binary file; read_file only reads text, PDFs and .docx`)
    }
    const text = kind ? await documentText(kind, data, ctx.abort).catch((error: unknown) => {
      ctx.abort.throwIfAborted()
      // Over a limit: one line the model relays to the user; the task fails, it is not retried.
      if (error instanceof ParseRefused) throw new ToolError(`${relPath} was refused: ${error.message}`)
      throw new ToolError(`${relPath} could not be read as ${kind}: ${error instanceof Error ? error.message : String(error)}`)
    }) : data.toString("utf8")
    const lines = text === "" ? [] : text.split("\n")
    // A final newline ends the last line rather than starting an empty one.
    if (text.endsWith("\n")) lines.pop()
    if (offset > 1 && offset > lines.length) {
      throw new ToolError(`offset ${offset} is past the end of ${relPath}, which has ${lines.length} lines`)
    }
    const end = offset - 1 + limit
    return {
      path: workspaceRelative(userWorkspace(ctx), file),
      content: lines.slice(offset - 1, end).join("\n"),
      totalLines: lines.length,
      truncated: end < lines.length,
    }
  },
})

async function readSmallFile(file: string, relPath: string, signal: AbortSignal, maxBytes: number): Promise<Buffer> {
  try {
    // Size and content come from the same open file, so a file swapped in between cannot slip past the cap.
    const handle = await open(file, "r")
    try {
      const info = await handle.stat()
      if (info.isDirectory()) throw new ToolError(`${relPath} is a folder; use list_files`)
      if (info.size > maxBytes) {
        throw new ToolError(`${relPath} is ${info.size} bytes, over the ${maxBytes} byte limit of read_file`)
      }
      return await handle.readFile({ signal })
    } finally {
      await handle.close()
    }
  } catch (err) {
    throw fsError(err, relPath)
  }
}
