import { contentText, type ChatRequest, type RecordedRequest, type Reply, type Script } from "../fakes/model-server.ts"

/** A step that calls the reply tool. */
export const say = (text: string): Reply => ({ toolCalls: [{ name: "reply", args: { text } }] })

/** The request answers tool results (rather than a new message). */
export const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"

/** Keeps every request a script saw, parsed, for assertions. */
export function recorded(script: Script) {
  const requests: ChatRequest[] = []
  return { requests, script: (req: ChatRequest) => (requests.push(req), script(req)) }
}

/** The newest environment block of a request: the loop puts it before each new input. */
export function envText(req: RecordedRequest): string {
  const env = req.body.messages.map((m) => contentText(m.content)).filter((text) => text.startsWith("<env>"))
  return env.at(-1) ?? ""
}

/** A request's system text: every system message, joined as the model server joins them. */
export function systemText(req: RecordedRequest): string {
  return req.body.messages.filter((m) => m.role === "system").map((m) => contentText(m.content)).join("\n\n")
}
