import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { ChatRequest, Script } from "../fakes/model-server.ts"
import { TINY_PNG } from "../fakes/mcp-protocol.ts"
import { calling, chain } from "../support/e2e.ts"
import { startHarness, type Harness } from "../support/harness.ts"
import { mcpConfigFile } from "../mcp/support.ts"

// What an MCP server asks of Steward, through the real Supervisor, questions, agent loop, AI SDK
// and MCP client: a question answered with buttons and text in the chat, a completion the user
// allowed (its tokens in usage), an image the model sees, a tool list that changes mid-run.

const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href
const PROTOCOL_STDIO = new URL("../fakes/mcp-protocol-stdio.ts", import.meta.url).pathname
const protoEnv = (extra: Record<string, string> = {}) => ({ MCP_CONFIG: mcpConfigFile({ proto: { command: process.execPath, args: ["--import", TSX, PROTOCOL_STDIO] } }), ...extra })

let harness: Harness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const sentWith = (text: string) => () => harness!.channel.sent.some((m) => m.text.includes(text))

describe("an MCP server's requests to Steward", () => {
  it("asks the user its questions in the chat: buttons for a choice and a yes/no, typed text and numbers", async () => {
    harness = await startHarness(chain(calling("proto_ask", {})), protoEnv())
    const { channel } = harness
    await channel.say("tell the server about me")
    await channel.waitFor(sentWith("*Colour*"), "the colour question", 30_000)
    expect(channel.sent.find((m) => m.text.includes("*Colour*"))!.buttons!.map((b) => b.label)).toEqual(["red", "green", "Decline"])
    await channel.press("green")
    await channel.waitFor(sentWith("*Agree*"), "the yes/no question")
    await channel.say("1")
    await channel.waitFor(sentWith("*Name*"), "the name question")
    await channel.say("Ada")
    await channel.waitFor(sentWith("*Age*"), "the age question")
    await channel.say("two hundred")
    await channel.waitFor(sentWith("That does not fit"), "the age asked again")
    await channel.say("36")
    await channel.waitFor(sentWith("Result: proto_ask said"), "the answer", 30_000)
    const answer = channel.sent.find((m) => m.text.startsWith("Result: proto_ask said"))!.text
    expect(answer).toContain('\\"action\\":\\"accept\\"')
    expect(answer).toContain('\\"content\\":{\\"colour\\":\\"green\\",\\"agree\\":true,\\"name\\":\\"Ada\\",\\"age\\":36}')
  })

  it("lets the server use the Worker's model once the user allows it (mcp_sampling asks by default), its tokens counted", async () => {
    const sampled: ChatRequest[] = []
    const roles = chain(calling("proto_sample", {}))
    // The server's request comes to the Worker's model, with the server's own system prompt.
    const script: Script = (req) => (req.system === "Be brief" ? (sampled.push(req), { text: "hi from the model", usage: { prompt: 11, completion: 5 } }) : roles(req))
    harness = await startHarness(script, protoEnv())
    const since = Date.now()
    await harness.channel.say("sample something")
    await harness.channel.waitFor(sentWith("mcp_sampling"), "the approval question", 30_000)
    expect(harness.channel.sent.find((m) => m.text.includes("mcp_sampling"))!.text).toContain("“proto”")
    await harness.channel.press("Allow")
    await harness.channel.waitFor(sentWith("Result: proto_sample said"), "the answer", 30_000)
    expect(harness.channel.sent.at(-1)!.text).toContain("hi from the model")
    expect(sampled[0]!.body.max_tokens ?? sampled[0]!.body.max_completion_tokens).toBe(17)
    const usage = await harness.app.store.owner.usageSince(since)
    expect(usage).toContainEqual(expect.objectContaining({ role: "worker", input: 11, output: 5 }))
  })

  it("follows PERMISSIONS_FILE: mcp_sampling allowed for the server asks nobody; mcp_elicitation denied declines at once", async () => {
    const rules = join(mkdtempSync(join(tmpdir(), "steward-mcp-rules-")), "permissions.json")
    // The first answer (an MCP tool's, outside content) taints the conversation's later turns, and
    // the tasks they delegate: proto_ask, not read-only, would ask first unless the owner allows it.
    const taintedAllowed = { permission: "tainted:proto_*", pattern: "*", action: "allow" }
    writeFileSync(rules, JSON.stringify({ worker: [{ permission: "mcp_sampling", pattern: "proto", action: "allow" }, { permission: "mcp_elicitation", pattern: "proto", action: "deny" }, taintedAllowed] }))
    const roles = chain((req) => (req.lastUserText.includes("ask") ? calling("proto_ask", {}) : calling("proto_sample", {}))(req))
    const script: Script = (req) => (req.system === "Be brief" ? { text: "allowed by the rules" } : roles(req))
    harness = await startHarness(script, protoEnv({ PERMISSIONS_FILE: rules }))
    await harness.channel.say("sample it")
    await harness.channel.waitFor(sentWith("Result: proto_sample said"), "the sampling answer", 30_000)
    expect(harness.channel.sent.at(-1)!.text).toContain("allowed by the rules")
    await harness.channel.say("ask me")
    await harness.channel.waitFor(sentWith("proto_ask said"), "the elicitation answer", 30_000)
    expect(harness.channel.sent.at(-1)!.text).toContain('\\"action\\":\\"decline\\"')
    expect(harness.channel.sent.some((m) => m.buttons?.length)).toBe(false)
  })

  it("shows the model an image a tool returned (VISION=on), saved in the user's workspace", async () => {
    const seen: ChatRequest[] = []
    harness = await startHarness(chain(calling("proto_media", {}, seen)), protoEnv({ VISION: "on" }))
    await harness.channel.say("show me")
    await harness.channel.waitFor(sentWith("Result: proto_media said"), "the answer", 30_000)
    const images = seen.flatMap((req) => req.body.messages).flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<{ type: string; image_url?: { url: string } }>) : []))
    expect(images.filter((part) => part.type === "image_url").map((part) => part.image_url!.url)).toContain(`data:image/png;base64,${TINY_PNG}`)
    expect(harness.channel.sent.map((m) => m.text)).toContain("For your eyes only")
  })

  it("offers a tool the server added mid-run at the next step", async () => {
    const seen: ChatRequest[] = []
    const worker: Script = (req) => {
      seen.push(req)
      const results = req.lastToolResults.map((r) => r.toolName)
      if (results.includes("proto_extra")) return { text: `extra said ${req.lastToolResults[0]!.content}` }
      if (results.includes("proto_grow")) return { toolCalls: [{ name: "proto_extra", args: {} }] }
      return { toolCalls: [{ name: "proto_grow", args: {} }] }
    }
    // After reading a tool's answer the run is tainted, and a tool not marked read-only would ask
    // the user first: the owner's rule lets this server's tools run (the trust model, README).
    const rules = join(mkdtempSync(join(tmpdir(), "steward-mcp-rules-")), "permissions.json")
    writeFileSync(rules, JSON.stringify({ worker: [{ permission: "tainted:proto_*", pattern: "*", action: "allow" }] }))
    harness = await startHarness(chain(worker), protoEnv({ PERMISSIONS_FILE: rules }))
    await harness.channel.say("grow")
    await harness.channel.waitFor(sentWith("Result: extra said"), "the answer", 30_000)
    expect(seen[0]!.toolNames).not.toContain("proto_extra")
    expect(seen[1]!.toolNames).toContain("proto_extra")
    expect(harness.channel.sent.at(-1)!.text).toContain("extra here")
  })
})
