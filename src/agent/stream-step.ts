import { parsePartialJson, streamText } from "ai"

/**
 * Where a streamed step shows the text meant for the user while it is generated. An answer is
 * named by a key: "text" for the step's own text, the call id for a `reply` call's `text`.
 */
export interface AnswerStream {
  /** The text of answer `key` so far. */
  show(key: string, text: string): void
  /** What was shown as `key` is not an answer after all. */
  drop(key: string): void
}

/** The key of a step's own text. */
export const STEP_TEXT = "text"

/** How often the partial input of a streaming `reply` call is parsed for its text. */
const REPLY_PARSE_MS = 100

/**
 * One model call with `stream: true`: the same request and the same result as generateText
 * (the step's response messages and usage), while text meant for the user goes to `answers`
 * as it arrives — the step's text until the step turns out to call a tool (then it is dropped:
 * steps that call tools say nothing to the chat), and the `text` argument of each `reply` call,
 * parsed from the call's input as it streams. An error of the call is thrown, as generateText
 * throws it.
 */
export async function streamStep(request: Parameters<typeof streamText>[0], answers: AnswerStream) {
  const result = streamText(request)
  let text = ""
  // Whether the text has more than white space yet: kept, not recomputed, since a long answer
  // arrives in tens of thousands of deltas and a scan of the whole text at each was quadratic.
  let spoken = false
  let calling = false
  const replies = new Map<string, { input: string; shown: string; parsedAt: number }>()
  for await (const part of result.fullStream) {
    if (part.type === "error") throw part.error
    if (part.type === "text-delta" && !calling) {
      text += part.text
      spoken ||= part.text.trim() !== ""
      if (spoken) answers.show(STEP_TEXT, text)
    } else if (part.type === "tool-input-start") {
      if (!calling && spoken) answers.drop(STEP_TEXT)
      calling = true
      if (part.toolName === "reply") replies.set(part.id, { input: "", shown: "", parsedAt: -Infinity })
    } else if (part.type === "tool-input-delta") {
      const reply = replies.get(part.id)
      if (!reply) continue
      reply.input += part.delta
      // The input is parsed whole, so not at every delta: at most every REPLY_PARSE_MS (the
      // channels show at most one update a second anyway).
      const now = performance.now()
      if (now - reply.parsedAt < REPLY_PARSE_MS) continue
      reply.parsedAt = now
      const said = await replyText(reply.input)
      if (said && said !== reply.shown) answers.show(part.id, (reply.shown = said))
    }
  }
  request.abortSignal?.throwIfAborted()
  return { response: await result.response, usage: await result.usage }
}

/** The `text` argument of a reply call's input as far as it has arrived. */
async function replyText(input: string): Promise<string> {
  const { value } = await parsePartialJson(input)
  const text = value && typeof value === "object" && "text" in value ? value.text : undefined
  return typeof text === "string" ? text : ""
}
