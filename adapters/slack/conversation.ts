/** Where a conversation lives in Slack: a DM (or channel), and for a thread the ts of its first message. */
export type Place = { team: string; channel: string; thread?: string }

/** `slack:<team>:<channel>` for a DM, `slack:<team>:<channel>:<thread_ts>` for a thread. */
export function conversationOf({ team, channel, thread }: Place): string {
  return `slack:${team}:${channel}${thread ? `:${thread}` : ""}`
}

export function placeOf(conversation: string): Place {
  const [prefix, team, channel, thread, ...rest] = conversation.split(":")
  if (prefix !== "slack" || !team || !channel || thread === "" || rest.length > 0) throw new Error(`not a Slack conversation: ${conversation}`)
  return { team, channel, thread }
}

/** A message's id for the core: `<channel>:<ts>`, all that chat.update and chat.delete need. */
export const messageIdOf = (channel: string, ts: string) => `${channel}:${ts}`

export function messageRefOf(messageId: string): { channel: string; ts: string } {
  const [channel, ts] = messageId.split(":")
  if (!channel || !ts) throw new Error(`not a Slack message id: ${messageId}`)
  return { channel, ts }
}
