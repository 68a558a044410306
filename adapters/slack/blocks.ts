import type { Button } from "../../src/core/types.ts"
import { UndeliverableMessage } from "../../src/channel/channel.ts"
import { actionIdOf } from "./inbound.ts"

/** Block Kit's limits: blocks per message, buttons per actions block, characters of a button's
 *  label and of its value (action_id and block_id, at most 255, are ours and short). */
export const BLOCKS_LIMIT = 50
const BUTTONS_PER_BLOCK = 25
export const LABEL_LIMIT = 75
export const VALUE_LIMIT = 2000

export type Block = { type: "section"; text: { type: "mrkdwn"; text: string } } | { type: "actions"; block_id: string; elements: ButtonElement[] }
type ButtonElement = { type: "button"; action_id: string; text: { type: "plain_text"; text: string; emoji: true }; value: string }

export const section = (mrkdwn: string): Block => ({ type: "section", text: { type: "mrkdwn", text: mrkdwn } })

/** A label Slack accepts: 1-75 characters (UTF-16 units, the stricter count), cut with "…"
 *  between code points, never blank. */
function labelOf(label: string): string {
  const trimmed = label.trim()
  if (!trimmed) return "…"
  return trimmed.length <= LABEL_LIMIT ? trimmed : cutTo([...trimmed], LABEL_LIMIT - 1) + "…"
}

/** The longest prefix of `chars` within `limit` UTF-16 units. */
function cutTo(chars: string[], limit: number): string {
  let out = ""
  for (const char of chars) {
    if (out.length + char.length > limit) break
    out += char
  }
  return out
}

/** The text as a section with one button per option under it; the value is the core's button id.
 *  Buttons Slack cannot take (an id over 2,000 characters, more than fit 50 blocks) make the
 *  message undeliverable rather than a request Slack refuses. */
export function withButtons(mrkdwn: string, buttons: Button[]): Block[] {
  const rowsLimit = BLOCKS_LIMIT - 1
  if (buttons.length > rowsLimit * BUTTONS_PER_BLOCK) throw new UndeliverableMessage(`at most ${rowsLimit * BUTTONS_PER_BLOCK} buttons fit a Slack message, got ${buttons.length}`)
  const elements: ButtonElement[] = buttons.map((button, i) => {
    if (!button.id || button.id.length > VALUE_LIMIT) throw new UndeliverableMessage(`button id must be 1-${VALUE_LIMIT} characters for Slack, got ${button.id.length}`)
    return { type: "button", action_id: actionIdOf(i), text: { type: "plain_text", text: labelOf(button.label), emoji: true }, value: button.id }
  })
  const rows: Block[] = []
  for (let i = 0; i < elements.length; i += BUTTONS_PER_BLOCK) rows.push({ type: "actions", block_id: `steward-buttons-${i / BUTTONS_PER_BLOCK}`, elements: elements.slice(i, i + BUTTONS_PER_BLOCK) })
  return [section(mrkdwn), ...rows]
}
