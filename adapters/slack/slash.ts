import type { SlashCommand } from "@slack/bolt"
import type { CommandInfo, InboundMessage } from "../../src/core/types.ts"
import { conversationOf } from "./conversation.ts"

/** The one slash command in the app manifest (deploy/slack-manifest.json). */
export const SLASH_COMMAND = "/steward"

/** `/steward tasks` is the chat command `/tasks`, typed in the user's DM with Steward; an empty
 *  `/steward` or `/steward help` is answered by the adapter (undefined). */
export function chatCommandOf(text: string): string | undefined {
  const typed = text.trim().replace(/^\//, "")
  return typed === "" || /^help$/i.test(typed) ? undefined : `/${typed}`
}

/** `dm`: the user's DM with Steward, where the answer goes whatever channel the command was typed in. */
export function inboundOfCommand(command: SlashCommand, text: string, dm: string): InboundMessage {
  return { conversation: conversationOf({ team: command.team_id, channel: dm }), user: `slack:${command.user_id}`, text, eventId: `slack:command:${command.trigger_id}` }
}

/** The subcommands, as the user types them. */
export function slashHelp(commands: readonly CommandInfo[]): string {
  const lines = commands.map((command) => `• \`${SLASH_COMMAND} ${command.name}\` — ${command.description}`)
  return [`*${SLASH_COMMAND}* runs Steward's chat commands:`, ...lines, `• \`${SLASH_COMMAND} help\` — this list`].join("\n")
}
