import type { ModelMessage, ToolCallPart } from "ai"
import type { ImageRef } from "../core/types.ts"
import { imagePart } from "./context.ts"

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

/** Seed 004 §3.4: input that arrives mid-run is wrapped so the model treats it as new. */
export function reminder(text: string, fromUser: boolean): string {
  const intro = fromUser ? "The user sent the following message:" : "This arrived while you were working:"
  return ["<system-reminder>", intro, text, "", "Please address this message and continue with your tasks.", "</system-reminder>"].join("\n")
}

/** Images are kept as references to their workspace files; `withImages` reads them for each call. */
export function userMessage(text: string, images?: ImageRef[]): ModelMessage {
  if (!images?.length) return { role: "user", content: text }
  return { role: "user", content: [{ type: "text", text }, ...images.map(imagePart)] }
}
