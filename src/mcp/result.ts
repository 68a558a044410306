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

/** The image types every vision model takes; another (SVG, TIFF, BMP…) would fail the model's request. */
const MODEL_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])
/** The largest image given to the model (Anthropic's limit per image); a larger one is only saved. */
export const MAX_MODEL_IMAGE_BYTES = 5 * 1024 * 1024
/** The largest binary content saved in the workspace; a larger one is only named. */
export const MAX_SAVED_BYTES = 20 * 1024 * 1024

/**
 * An MCP tool result, the one place it is turned into what the model reads: text as it is;
 * binary content — an image, audio, an embedded resource's blob — saved in the user's workspace
 * (`mcp/<server>/…`) and named by its workspace path, so `send_file` can send it, an image a
 * vision model takes also shown to it; an embedded resource with its URI; a resource link by URI
 * (read_resource reads it). Content annotated for the user alone (`audience: ["user"]`) is sent
 * to the user (text as a message, binary content as a file), not shown to the model. Cut at
 * 20,000 characters.
 */
export async function formatResult(result: CallToolResult, { server, ctx }: ResultFormat): Promise<McpToolOutput> {
  const images: ImageRef[] = []
  const forUser: string[] = []
  const lines: string[] = []
  for (const [index, part] of result.content.entries()) {
    const binary = binaryOf(part)
    const userOnly = forUserOnly(part)
    if (!binary) {
      if (userOnly) forUser.push(partText(part))
      else lines.push(partText(part))
      continue
    }
    const saved = await saveBinary(ctx, server, binary, index)
    if (!userOnly) {
      if (saved.image) images.push(saved.image)
      lines.push(`[${binary.head}, ${saved.note}]`)
    } else if (saved.file) {
      // A picture or a recording meant for the user goes to their chat as a file.
      await ctx.replies.sendFile(ctx, { path: saved.file, name: path.basename(saved.file), mimeType: binary.mediaType }, "")
      lines.push(`[${binary.head}, meant for the user: sent to them]`)
    } else lines.push(`[${binary.head}, meant for the user, ${saved.note}]`)
  }
  if (forUser.length > 0) {
    await ctx.replies.reply(ctx, forUser.join("\n\n"))
    lines.push(`[${forUser.length} part(s) meant for the user were sent to them]`)
  }
  if (lines.length === 0 && result.structuredContent !== undefined) lines.push(JSON.stringify(result.structuredContent))
  const { text, truncated } = bounded(lines.join("\n"))
  return { text, ...(truncated ? { truncated } : {}), ...(images.length ? { images } : {}) }
}

/** A resource's contents (read_resource), formatted like a tool result: text as it is, binary content saved. */
export async function formatResource(result: ReadResourceResult, format: ResultFormat): Promise<McpToolOutput> {
  return formatResult({ content: result.contents.map((resource) => ({ type: "resource", resource })) }, format)
}

type Binary = { base64: string; mediaType: string; head: string }

function binaryOf(part: Part): Binary | undefined {
  if (part.type === "image" || part.type === "audio") return { base64: part.data, mediaType: part.mimeType, head: `${part.type} ${part.mimeType}` }
  if (part.type === "resource" && "blob" in part.resource) {
    const mediaType = part.resource.mimeType ?? "application/octet-stream"
    return { base64: part.resource.blob, mediaType, head: `resource ${part.resource.uri} (${mediaType})` }
  }
  return undefined
}

function forUserOnly(part: Part): boolean {
  const audience = (part as { annotations?: { audience?: string[] } }).annotations?.audience
  return audience !== undefined && audience.length > 0 && !audience.includes("assistant")
}

function partText(part: Part): string {
  switch (part.type) {
    case "text":
      return part.text
    case "resource": {
      const { uri, mimeType } = part.resource
      return `[resource ${uri}${mimeType ? ` (${mimeType})` : ""}]\n${"text" in part.resource ? part.resource.text : ""}`
    }
    case "resource_link":
      return `[resource link ${part.uri}: ${part.name}${part.description ? ` — ${part.description}` : ""}] (read_resource reads it)`
    default:
      return `[${part.type}]`
  }
}

/** Saved under the user's workspace, named after the call, so a replayed call overwrites its own
 *  file; an image a vision model takes (type and size) is also returned for the model. */
async function saveBinary(ctx: ToolContext, server: string, binary: Binary, index: number): Promise<{ note: string; file?: string; image?: ImageRef }> {
  // The decoded size, without decoding content too large to keep.
  const bytes = Math.floor((binary.base64.replace(/=+$/, "").length * 3) / 4)
  if (bytes > MAX_SAVED_BYTES) return { note: `${bytes} bytes, not saved: over the ${MAX_SAVED_BYTES / 1024 / 1024} MB limit` }
  const relative = path.posix.join("mcp", server, `${ctx.sessionId}-${ctx.callId}-${index}.${extensionOf(binary.mediaType)}`.replace(/[^A-Za-z0-9._-]/g, "_"))
  const file = path.join(userWorkspaceDir(ctx.workspaceDir, ctx.user), relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, Buffer.from(binary.base64, "base64"))
  const mediaType = binary.mediaType.split(";")[0]!.trim().toLowerCase()
  if (!mediaType.startsWith("image/")) return { note: `saved as ${relative}`, file }
  if (!MODEL_IMAGE_TYPES.has(mediaType)) return { note: `saved as ${relative}; not shown to the model, which takes PNG, JPEG, GIF and WebP`, file }
  if (bytes === 0 || bytes > MAX_MODEL_IMAGE_BYTES) return { note: `saved as ${relative}; ${bytes} bytes, not shown to the model (at most ${MAX_MODEL_IMAGE_BYTES / 1024 / 1024} MB)`, file }
  return { note: `saved as ${relative}`, file, image: { path: file, mediaType } }
}

export function bounded(text: string): { text: string; truncated: boolean } {
  if (text.length <= MAX_RESULT_CHARS) return { text, truncated: false }
  return { text: `${text.slice(0, MAX_RESULT_CHARS)}\n[… ${text.length - MAX_RESULT_CHARS} more characters cut]`, truncated: true }
}
