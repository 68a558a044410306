import type { ModelMessage, ToolCallPart } from "ai"

export function toolCalls(message: ModelMessage): ToolCallPart[] {
  if (message.role !== "assistant" || typeof message.content === "string") return []
  return message.content.filter((part): part is ToolCallPart => part.type === "tool-call")
}

export function textOf(message: ModelMessage): string {
  if (typeof message.content === "string") return message.content
  return message.content
    .filter((part) => part.type === "text")
    .map((part) => (part as { text: string }).text)
    .join("")
    .trim()
}
