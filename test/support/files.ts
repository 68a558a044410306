/** Model scripts and checks shared by the end-to-end file tests of both channels. */
import { byRole, contentText, type ChatRequest, type ModelServer, type Script } from "../fakes/model-server.ts"
import { afterTool, say } from "./scripts.ts"
import { unwrapped } from "../../src/trust/envelope.ts"

/** A few bytes that start like a JPEG, and like an Ogg voice note: enough for type sniffing. */
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from("a tiny photo")])
export const OGG = Buffer.concat([Buffer.from("OggS"), Buffer.alloc(60, 1)])

/** A Teller that repeats what it was given, so a test can read the message the Teller saw. */
export const echoing: Script = byRole({ teller: (req) => (afterTool(req) ? { text: "" } : say(`Got: ${req.lastUserText}`)) })

/** Teller → Planner → Worker: the Worker reads the file named in the message and reports its text. */
export const readingWorker: Script = byRole({
  teller: (req) => {
    if (afterTool(req)) return { text: "" }
    if (req.lastUserText.startsWith("<task-results>")) return say(`From your file: ${/Read: ([^"\\]+)/.exec(unwrapped(req.lastUserText))?.[1] ?? "nothing"}`)
    return { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }
  },
  planner: (req) => (afterTool(req) ? { text: "Dispatched." } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
  worker: (req) => {
    const read = req.lastToolResults.find((result) => result.toolName === "read_file")
    if (read) return { text: `Read: ${(JSON.parse(unwrapped(read.content)) as { content: string }).content}` }
    const path = /Saved file: (\S+)/.exec(req.lastUserText)?.[1]
    return { toolCalls: [{ name: "read_file", args: { path } }] }
  },
})

/** A Teller that sends two workspace files back: a document with a caption, and a picture. */
export const sendingFiles = (document: string, picture: string): Script =>
  byRole({
    teller: (req) =>
      afterTool(req)
        ? { text: "" }
        : { toolCalls: [{ name: "send_file", args: { path: document, caption: "Here is the **report**" } }, { name: "send_file", args: { path: picture } }] },
  })

/** The image parts (data URLs) of the Teller's requests, as the provider sent them. */
export function imagesSent(server: ModelServer): string[] {
  return server.requests
    .filter((request) => request.role === "teller")
    .flatMap((request) => request.body.messages)
    .flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<{ type: string; image_url?: { url: string } }>) : []))
    .filter((part) => part.type === "image_url")
    .map((part) => part.image_url!.url)
}

/** The text of the user message of the Teller's first request. */
export const firstTellerText = (server: ModelServer) => {
  const request = server.requests.find((r) => r.role === "teller")
  return contentText(request?.body.messages.findLast((m) => m.role === "user")?.content)
}

export type { ChatRequest }
