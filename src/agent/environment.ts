import type { ModelMessage } from "ai"
import { systemTimeZone } from "../config/platforms.ts"
import { isoInZone, longLocalTime } from "../user/time-zone.ts"

const ENV_OPEN = "<env>"
const SERVER_ZONE = systemTimeZone()

/**
 * The facts a model cannot know by itself: without them "tomorrow at 9" cannot be scheduled.
 * They change with every message, so the loop puts them before each new input, never in the
 * system prompt, whose bytes must stay the same for a provider's prompt cache. `timeZone` is
 * the user's (src/user/profiles.ts), so "today" is their day.
 */
export function environment(now: Date, where: { conversation: string; user: string }, timeZone = SERVER_ZONE): string {
  return [
    ENV_OPEN,
    `  Current time: ${longLocalTime(now, timeZone)} (time zone ${timeZone}; ISO ${isoInZone(now, timeZone)})`,
    `  Channel: ${where.conversation.split(":")[0]}`,
    `  Conversation: ${where.conversation}`,
    `  User: ${where.user}`,
    "</env>",
  ].join("\n")
}

/** The environment message the loop puts before new input: not a turn of its own. */
export function isEnvironment(message: ModelMessage): boolean {
  return message.role === "user" && typeof message.content === "string" && message.content.startsWith(ENV_OPEN)
}
