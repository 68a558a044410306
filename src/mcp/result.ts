import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import type { CallToolResult, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js"
import { extensionOf } from "../attachments/media-types.ts"
import type { ImageRef } from "../core/types.ts"
import { userWorkspaceDir } from "../tool/workspace.ts"
import type { ToolContext } from "../tool/tool.ts"

// Like fetch_url's default: an MCP result lands in the model's context window, and a server
// that returns a whole repository listing must not crowd out the task.
export const MAX_RESULT_CHARS = 20_000

type Part = CallToolResult["content"][number]

/** What an MCP call returns to the model. `images` (saved in the user's workspace) reach a
 *  vision model as images in its next request. */
export interface McpToolOutput {
  text: string
  truncated?: boolean
  images?: ImageRef[]
}

/** A result as the model reads it and as it is kept, with the call's context to save images in. */
export interface ResultFormat {
  server: string
  ctx: ToolContext
}

/**
 * An MCP tool result, the one place it is turned into what the model reads: text as it is;
 * an image saved in the user's workspace (`mcp/<server>/…`) and named by its workspace path,
 * so `send_file` can send it and a vision model sees it; an embedded resource with its URI; a
 * resource link by URI (read_resource reads it). Content annotated for the user alone
 * (`audience: ["user"]`) is sent to the user, not shown to the model. Cut at 20,000 characters.
 */
export async function formatResult(result: CallToolResult, { server, ctx }: ResultFormat): Promise<McpToolOutput> {
  const images: ImageRef[] = []
  const forUser: string[] = []
  const lines: string[] = []
  for (const [index, part] of result.content.entries()) {
    if (forUserOnly(part)) {
      if (part.type === "text") forUser.push(part.text)
      continue
    }
    if (part.type === "image") {
      const saved = await saveImage(ctx, server, part.data, part.mimeType, index)
      images.push(saved.ref)
      lines.push(`[image ${part.mimeType}, saved as ${saved.relative}]`)
    } else lines.push(partText(part))
  }
  if (forUser.length > 0) {
    await ctx.replies.reply(ctx, forUser.join("\n\n"))
    lines.push(`[${forUser.length} part(s) meant for the user were sent to them]`)
  }
  if (lines.length === 0 && result.structuredContent !== undefined) lines.push(JSON.stringify(result.structuredContent))
  const { text, truncated } = bounded(lines.join("\n"))
  return { text, ...(truncated ? { truncated } : {}), ...(images.length ? { images } : {}) }
}

/** A resource's contents (read_resource), formatted like a tool result: text as it is, an image saved. */
export async function formatResource(result: ReadResourceResult, format: ResultFormat): Promise<McpToolOutput> {
  const content: CallToolResult["content"] = result.contents.map((item) =>
    "blob" in item && item.mimeType?.startsWith("image/") ? { type: "image", data: item.blob, mimeType: item.mimeType } : { type: "resource", resource: item },
  )
  return formatResult({ content }, format)
}

function forUserOnly(part: Part): boolean {
  const audience = (part as { annotations?: { audience?: string[] } }).annotations?.audience
  return audience !== undefined && audience.length > 0 && !audience.includes("assistant")
}

function partText(part: Exclude<Part, { type: "image" }>): string {
  switch (part.type) {
    case "text":
      return part.text
    case "audio":
      return `[audio ${part.mimeType}, ${Math.floor((part.data.length * 3) / 4)} bytes]`
    case "resource": {
      const { uri, mimeType } = part.resource
      const head = `[resource ${uri}${mimeType ? ` (${mimeType})` : ""}]`
      return "text" in part.resource ? `${head}\n${part.resource.text}` : `${head} ${Math.floor((part.resource.blob.length * 3) / 4)} bytes of binary content`
    }
    case "resource_link":
      return `[resource link ${part.uri}: ${part.name}${part.description ? ` — ${part.description}` : ""}] (read_resource reads it)`
  }
}

/** Saved under the user's workspace, named after the call, so a replayed call overwrites its own file. */
async function saveImage(ctx: ToolContext, server: string, base64: string, mediaType: string, index: number): Promise<{ ref: ImageRef; relative: string }> {
  const relative = path.posix.join("mcp", server, `${ctx.sessionId}-${ctx.callId}-${index}.${extensionOf(mediaType)}`.replace(/[^A-Za-z0-9._-]/g, "_"))
  const file = path.join(userWorkspaceDir(ctx.workspaceDir, ctx.user), relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, Buffer.from(base64, "base64"))
  return { ref: { path: file, mediaType }, relative }
}

export function bounded(text: string): { text: string; truncated: boolean } {
  if (text.length <= MAX_RESULT_CHARS) return { text, truncated: false }
  return { text: `${text.slice(0, MAX_RESULT_CHARS)}\n[… ${text.length - MAX_RESULT_CHARS} more characters cut]`, truncated: true }
}
