import type { ModelMessage } from "ai"

const ENV_OPEN = "<env>"

const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone
// Creating a formatter is slow; the process's time zone does not change while it runs.
const localTime = new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "full", timeStyle: "long" })

/**
 * The facts a model cannot know by itself: without them "tomorrow at 9" cannot be scheduled.
 * They change with every message, so the loop puts them before each new input, never in the
 * system prompt, whose bytes must stay the same for a provider's prompt cache.
 */
export function environment(now: Date, where: { conversation: string; user: string }): string {
  const local = localTime.format(now)
  return [
    ENV_OPEN,
    `  Current time: ${local} (time zone ${timeZone}; ISO ${isoWithOffset(now)})`,
    `  Channel: ${where.conversation.split(":")[0]}`,
    `  Conversation: ${where.conversation}`,
    `  User: ${where.user}`,
    "</env>",
  ].join("\n")
}

function isoWithOffset(now: Date): string {
  const offset = -now.getTimezoneOffset()
  const local = new Date(now.getTime() + offset * 60_000).toISOString().slice(0, 19)
  const sign = offset >= 0 ? "+" : "-"
  const abs = Math.abs(offset)
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`
}

/** The environment message the loop puts before new input: not a turn of its own. */
export function isEnvironment(message: ModelMessage): boolean {
  return message.role === "user" && typeof message.content === "string" && message.content.startsWith(ENV_OPEN)
}
