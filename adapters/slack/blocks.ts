import type { Button } from "../../src/core/types.ts"
import { actionIdOf } from "./inbound.ts"

/** Block Kit's limits: buttons per actions block, characters of a button's label. */
const BUTTONS_PER_BLOCK = 25
const LABEL_LIMIT = 75

export type Block = { type: "section"; text: { type: "mrkdwn"; text: string } } | { type: "actions"; block_id: string; elements: ButtonElement[] }
type ButtonElement = { type: "button"; action_id: string; text: { type: "plain_text"; text: string; emoji: true }; value: string }

export const section = (mrkdwn: string): Block => ({ type: "section", text: { type: "mrkdwn", text: mrkdwn } })

/** The text as a section with one button per option under it; the value is the core's button id. */
export function withButtons(mrkdwn: string, buttons: Button[]): Block[] {
  const elements: ButtonElement[] = buttons.map((button, i) => ({
    type: "button",
    action_id: actionIdOf(i),
    text: { type: "plain_text", text: button.label.slice(0, LABEL_LIMIT), emoji: true },
    value: button.id,
  }))
  const rows: Block[] = []
  for (let i = 0; i < elements.length; i += BUTTONS_PER_BLOCK) rows.push({ type: "actions", block_id: `steward-buttons-${i / BUTTONS_PER_BLOCK}`, elements: elements.slice(i, i + BUTTONS_PER_BLOCK) })
  return [section(mrkdwn), ...rows]
}
