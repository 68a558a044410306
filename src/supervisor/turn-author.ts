import type { UserId } from "../core/types.ts"
import type { InboxEvent } from "../store/records.ts"

/**
 * A Teller turn acts for one person: the author of the events it handles. In a conversation
 * several people write in (a Slack channel thread, a Telegram group) each person's messages
 * are handled in turns of their own, so nothing one of them sends is answered with another's
 * memory, files or rights.
 */

/** Whose turn comes next: the asker's, when an ask_user answer waits — the Teller stopped at
 *  that call and continues it as the person it asked, whoever wrote meanwhile —, else the author
 *  of the oldest event. */
export function nextAuthor(events: readonly InboxEvent[]): UserId | undefined {
  return (events.find((event) => event.kind === "answer") ?? events[0])?.user
}

/** The first event a turn for `author` handles (the one that counts its attempts). */
export function firstOf(events: readonly InboxEvent[], author: UserId): InboxEvent | undefined {
  return events.find((event) => event.kind === "answer" && event.user === author) ?? events.find((event) => event.user === author)
}

/** Takes the author's events out of the inbox, in arrival order; other people's stay queued for
 *  their own turns. */
export function takeOwn(events: InboxEvent[], author: UserId): InboxEvent[] {
  const own = events.filter((event) => event.user === author)
  const others = events.filter((event) => event.user !== author)
  events.splice(0, events.length, ...others)
  return own
}

/** Puts events a stopped turn had taken back, in arrival order. */
export function putBack(events: InboxEvent[], taken: readonly InboxEvent[]): void {
  const merged = [...taken, ...events].sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  events.splice(0, events.length, ...merged)
}
