import { existsSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { formatResult, MAX_MODEL_IMAGE_BYTES, MAX_SAVED_BYTES } from "../../src/mcp/result.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { testWorkspace } from "./support.ts"

// Binary content too large for the model or the workspace, as a server may return it.

const ctx = { user: "test:big", sessionId: "s1", callId: "c1", workspaceDir: testWorkspace, replies: { reply: async () => {} } } as unknown as ToolContext
const png = (bytes: number) => ({ type: "image" as const, data: Buffer.alloc(bytes).toString("base64"), mimeType: "image/png" })

describe("an MCP result's binary content", () => {
  it("keeps an image over the model's limit from the model, and does not save one over the workspace's", async () => {
    const result = await formatResult({ content: [png(MAX_MODEL_IMAGE_BYTES + 1), png(0)] }, { server: "srv", ctx })
    expect(result.images).toBeUndefined()
    expect(result.text).toMatch(/^\[image image\/png, saved as mcp\/srv\/s1-c1-0\.png; 5242881 bytes, not shown to the model \(at most 5 MB\)\]\n\[image image\/png, saved as mcp\/srv\/s1-c1-1\.png; 0 bytes, not shown/)
    const huge = { type: "resource" as const, resource: { uri: "blob://huge", mimeType: "video/mp4", blob: "A".repeat(Math.ceil(((MAX_SAVED_BYTES + 3) * 4) / 3)) } }
    const big = await formatResult({ content: [huge] }, { server: "srv", ctx: { ...ctx, callId: "c2" } })
    expect(big.text).toMatch(/^\[resource blob:\/\/huge \(video\/mp4\), \d+ bytes, not saved: over the 20 MB limit\]$/)
    expect(existsSync(`${testWorkspace}/test-big/mcp/srv/s1-c2-0.mp4`)).toBe(false)
  })

  it("sends an image or embedded text meant for the user alone to the user, not to the model", async () => {
    const sent: Array<{ name: string; mimeType: string }> = []
    const replies: string[] = []
    const forUser = { annotations: { audience: ["user" as const] } }
    const userCtx = { ...ctx, callId: "c3", replies: { reply: async (_c: unknown, text: string) => void replies.push(text), sendFile: async (_c: unknown, file: { name: string; mimeType: string }) => void sent.push(file) } } as unknown as ToolContext
    const result = await formatResult(
      {
        content: [
          { ...png(10), ...forUser },
          { type: "resource", resource: { uri: "memo://u", mimeType: "text/plain", text: "your receipt" }, ...forUser },
          { type: "text", text: "for both" },
        ],
      },
      { server: "srv", ctx: userCtx },
    )
    expect(sent).toEqual([expect.objectContaining({ name: "s1-c3-0.png", mimeType: "image/png" })])
    expect(replies).toEqual(["[resource memo://u (text/plain)]\nyour receipt"])
    expect(result.images).toBeUndefined()
    expect(result.text).toBe("[image image/png, meant for the user: sent to them]\nfor both\n[1 part(s) meant for the user were sent to them]")
  })
})
