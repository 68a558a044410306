import type { ChatRequest, Reply, Script } from "../fakes/model-server.ts"

/** A step that calls the reply tool. */
export const say = (text: string): Reply => ({ toolCalls: [{ name: "reply", args: { text } }] })

/** The request answers tool results (rather than a new message). */
export const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"

/** Keeps every request a script saw, parsed, for assertions. */
export function recorded(script: Script) {
  const requests: ChatRequest[] = []
  return { requests, script: (req: ChatRequest) => (requests.push(req), script(req)) }
}
