import { stat } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { mediaTypeOf, sizeText } from "../attachments/media-types.ts"
import { defineTool, ToolError } from "./tool.ts"
import { fsError, pathPattern, userWorkspace, workspacePath, workspaceRelative } from "./workspace.ts"

/** Telegram's limit for files a bot sends; Slack takes more, but one limit keeps the tool predictable. */
export const MAX_SEND_BYTES = 50 * 1024 * 1024

const parameters = z.object({
  path: z.string().describe("File path relative to the workspace."),
  caption: z.string().max(1000).optional().describe("A short text shown with the file."),
})

export const sendFileTool = defineTool({
  id: "send_file",
  description:
    "Send a file from the workspace to the user's chat (images are shown as pictures), with an optional caption. " +
    "Files over 50 MB are refused. Returns the path and size sent.",
  parameters,
  guardedWhenTainted: true,
  pattern: (args) => pathPattern(args.path),
  async execute({ path: relPath, caption = "" }, ctx) {
    const file = await workspacePath(ctx, relPath)
    const info = await stat(file).catch((error: unknown) => {
      throw fsError(error, relPath)
    })
    if (!info.isFile()) throw new ToolError(`${relPath} is not a file`)
    if (info.size === 0) throw new ToolError(`${relPath} is empty; chats refuse empty files`)
    if (info.size > MAX_SEND_BYTES) throw new ToolError(`${relPath} is ${sizeText(info.size)}, over the ${sizeText(MAX_SEND_BYTES)} limit for sending files`)
    const name = path.basename(file)
    await ctx.replies.sendFile(ctx, { path: file, name, mimeType: mediaTypeOf(name) }, caption.trim())
    return { sent: workspaceRelative(userWorkspace(ctx), file), bytes: info.size }
  },
})
