/**
 * The streamed form of a Messages API answer (`"stream": true`), as Anthropic sends it: named
 * server-sent events — `message_start` (the message with empty content and the input usage),
 * per content block `content_block_start` (a text block with empty text, a `tool_use` block with
 * empty input), its `content_block_delta`s (`text_delta`, `input_json_delta` — the first one
 * empty, as the real API sends it) and `content_block_stop`, then `message_delta` (stop reason
 * and output usage) and `message_stop`. A `ping` follows the first block's start, as it does there.
 */
import type { ServerResponse } from "node:http"

/** A message as the non-streamed API would answer it. */
export interface AnthropicMessage {
  id: string
  model: string
  content: Array<{ type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: object }>
  stop_reason: "end_turn" | "tool_use"
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number }
}

/** How a streamed answer arrives: its text and tool inputs in `chunks` deltas spread evenly over `overMs`. */
export type AnthropicPace = { chunks: number; overMs: number }

/** Characters per delta when no pace is given. */
const CHUNK_SIZE = 8

function pieces(text: string, size: number): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/** Writes `message` to `res` as Anthropic's event stream, paced by `pace`; resolves at the end
 *  (or when the client went away). `firstDelta` is told when the first text or input delta goes out. */
export async function streamMessage(res: ServerResponse, message: AnthropicMessage, pace: AnthropicPace | undefined, firstDelta: () => void): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  const gone = () => res.destroyed || res.writableEnded
  const event = (type: string, data: object) => {
    if (!gone()) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  }
  const bodies = message.content.map((block) => (block.type === "text" ? block.text : JSON.stringify(block.input)))
  const streamed = bodies.reduce((sum, body) => sum + body.length, 0)
  const size = pace ? Math.max(1, Math.ceil(streamed / pace.chunks)) : CHUNK_SIZE
  const delta = async (index: number, payload: object) => {
    firstDelta()
    event("content_block_delta", { index, delta: payload })
    if (pace) await new Promise((resolve) => setTimeout(resolve, pace.overMs / pace.chunks))
  }

  const { usage } = message
  event("message_start", {
    message: { id: message.id, type: "message", role: "assistant", model: message.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  })
  for (const [index, block] of message.content.entries()) {
    if (gone()) return
    if (block.type === "text") {
      event("content_block_start", { index, content_block: { type: "text", text: "" } })
      if (index === 0) event("ping", {})
      for (const text of pieces(block.text, size)) await delta(index, { type: "text_delta", text })
    } else {
      event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } })
      if (index === 0) event("ping", {})
      event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } })
      for (const partial_json of pieces(bodies[index]!, size)) await delta(index, { type: "input_json_delta", partial_json })
    }
    event("content_block_stop", { index })
  }
  event("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
  event("message_stop", {})
  if (!gone()) res.end()
}
