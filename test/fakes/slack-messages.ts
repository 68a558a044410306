/**
 * What a Slack message is in the fake Slack API, and what Slack accepts as one: the shapes of
 * messages, blocks and files, the timestamps that name messages, and the checks a post or an
 * update goes through (Slack's limits, its error names).
 */

type Params = Record<string, unknown>
export type SlackBlock = { type: string; block_id?: string; text?: { type: string; text: string }; elements?: SlackElement[] }
export type SlackElement = { type: string; action_id?: string; value?: string; text?: { type: string; text: string } }
export type SlackMessage = { channel: string; ts: string; text: string; blocks?: SlackBlock[]; thread_ts?: string; user: string; bot_id: string; metadata?: { event_type: string; event_payload: Record<string, unknown> }; streaming?: boolean }
/** A file as a message event carries it. */
export type SlackFile = { id: string; name: string; mimetype: string; size: number; url_private_download: string; url_private: string; mode: string }

const MESSAGE_LIMIT = 40_000
const SECTION_TEXT_LIMIT = 3000
const BUTTON_TEXT_LIMIT = 75
const ACTIONS_LIMIT = 25

/** A Web API call refused: answered `{ ok: false, error }` with HTTP 200, as Slack does. */
export class ApiError extends Error {
  constructor(readonly error: string) {
    super(error)
  }
}

// Timestamps are shared by all fakes and helpers, so user and bot messages never collide and sort in order.
let lastTs = 0
export function nextTs(): string {
  lastTs++
  return `${1_700_000_000 + Math.floor(lastTs / 1_000_000)}.${String(lastTs % 1_000_000).padStart(6, "0")}`
}

export function requireChannel(params: Params): string {
  if (typeof params.channel !== "string" || !params.channel) throw new ApiError("channel_not_found")
  return params.channel
}

/** The text and blocks of a post or update, checked against Slack's limits. */
export function contentOf(params: Params): { text?: string; blocks?: SlackBlock[] } {
  const text = params.text === undefined ? undefined : String(params.text)
  if (text !== undefined && text.length > MESSAGE_LIMIT) throw new ApiError("msg_too_long")
  if (params.blocks === undefined) return { text }
  let blocks: unknown = params.blocks
  if (typeof blocks === "string") {
    try {
      blocks = JSON.parse(blocks)
    } catch {
      // As on Slack: a `blocks` field that is not JSON is the caller's mistake, answered with HTTP 200.
      throw new ApiError("invalid_blocks_format")
    }
  }
  if (!Array.isArray(blocks)) throw new ApiError("invalid_blocks_format")
  if (!blocks.every((block) => typeof block === "object" && block !== null && typeof (block as SlackBlock).type === "string")) throw new ApiError("invalid_blocks")
  const actionIds = new Set<string>()
  for (const block of blocks as SlackBlock[]) {
    if (block.type === "section" && (!block.text?.text || block.text.text.length > SECTION_TEXT_LIMIT)) throw new ApiError("invalid_blocks")
    if (block.type !== "actions") continue
    if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > ACTIONS_LIMIT) throw new ApiError("invalid_blocks")
    for (const element of block.elements) {
      const label = element?.text?.text ?? ""
      if (!element || element.type !== "button" || element.text?.type !== "plain_text" || !label || label.length > BUTTON_TEXT_LIMIT) throw new ApiError("invalid_blocks")
      if (!element.action_id || actionIds.has(element.action_id)) throw new ApiError("invalid_blocks")
      actionIds.add(element.action_id)
    }
  }
  return { text, blocks: blocks as SlackBlock[] }
}

/** A post's or update's `metadata` parameter (an object, or JSON as form-encoded calls send it). */
export function metadataOf(params: Record<string, unknown>): SlackMessage["metadata"] | undefined {
  const metadata = params.metadata as SlackMessage["metadata"] | string | undefined
  return typeof metadata === "string" ? (JSON.parse(metadata) as SlackMessage["metadata"]) : metadata
}
