import type { ToolSummary } from "../store/records.ts"

/** A chat message as an adapter hands it to the core. */
export interface InboundMessage {
  /** `<channel>:…`, e.g. `telegram:1001`, `slack:T1:D1:1700000000.000100`. */
  conversation: string
  /** `<channel>:<user-id>`. */
  user: string
  text: string
}

/** What a running task is doing, for a status line the adapter may edit in place. */
export interface ProgressUpdate {
  taskId: string
  agent: string
  state: "running" | "done"
  tools: ToolSummary[]
}

/**
 * The contract between the core and a chat platform. Adapters know nothing about agents:
 * they turn platform events into InboundMessages and render what the core sends.
 */
export interface Channel {
  /** The prefix of the conversation ids this channel owns ("console", "slack", "telegram"). */
  readonly name: string
  start(onMessage: (message: InboundMessage) => Promise<void>): Promise<void>
  /** Posts one reply; resolves with the platform's id for it once the platform accepted it. */
  send(conversation: string, text: string): Promise<{ messageId: string }>
  progress?(conversation: string, update: ProgressUpdate): void
  stop(): Promise<void>
}

export function channelOf(conversation: string): string {
  return conversation.slice(0, conversation.indexOf(":"))
}
