import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, expect, it } from "vitest"
import { startEmbeddingsServer, type EmbeddingsServer } from "../fakes/embeddings-server.ts"
import { byRole, startModelServer, type ChatRequest, type ModelServer, type Reply } from "../fakes/model-server.ts"
import { StewardProcess } from "../support/process.ts"
import { eventually } from "../support/wait-for.ts"
import { unwrapped } from "../../src/trust/envelope.ts"

const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === "tool"
const reply = (text: string): Reply => ({ toolCalls: [{ name: "reply", args: { text } }] })

let server: ModelServer | undefined
let embeddings: EmbeddingsServer | undefined
let steward: StewardProcess | undefined
const dataDir = mkdtempSync(join(tmpdir(), "steward-e2e-memory-"))

afterEach(async () => {
  if (steward && steward.child.exitCode === null) await steward.kill()
  await server?.close()
  await embeddings?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

it("remembers a fact in one turn and finds it with the Planner's search_memory in a later one", async () => {
  server = await startModelServer(
    byRole({
      teller: (req) => {
        if (afterTool(req)) {
          const last = req.lastToolResults[0]!
          return last.toolName === "remember" ? reply("Noted.") : { text: "" }
        }
        if (req.lastUserText.startsWith("remember")) return { toolCalls: [{ name: "remember", args: { content: "The user's cat is called Miso and likes tuna." } }] }
        if (req.lastUserText.startsWith("<task-results>")) return reply(req.lastUserText.match(/Memory says: (.*)/)?.[1] ?? "I could not find it.")
        return { toolCalls: [{ name: "delegate", args: { prompt: `Answer from memory: ${req.lastUserText}` } }] }
      },
      planner: (req) => {
        if (!afterTool(req)) return { toolCalls: [{ name: "search_memory", args: { query: "cat name" } }] }
        const { hits } = JSON.parse(unwrapped(req.lastToolResults[0]!.content)) as { hits: Array<{ content: string }> }
        return { text: `Memory says: ${hits[0]?.content ?? "nothing"}` }
      },
    }),
  )
  steward = StewardProcess.start({ DATA_DIR: dataDir, MODEL: "openai-compatible:scripted", OPENAI_COMPATIBLE_BASE_URL: server.url })
  steward.send("remember: my cat is Miso, she likes tuna")
  await steward.waitFor((p) => p.replies.length >= 1, "the acknowledgement")
  steward.send("what is my cat called?")
  await steward.waitFor((p) => p.replies.length >= 2, "the answer")
  steward.child.stdin.end()
  expect(await steward.exited).toBe(0)
  expect(steward.replies[0]).toBe("Noted.")
  expect(steward.replies[1]).toContain("Miso")
  // The note is a markdown file in the user's own memory folder.
  expect(readdirSync(join(dataDir, "memory/console-local/memory")).some((file) => file.endsWith(".md"))).toBe(true)
})

it("with EMBEDDING_MODEL, embeds the notes at start and finds one by meaning", async () => {
  embeddings = await startEmbeddingsServer()
  const notes = join(dataDir, "memory/console-local/memory")
  mkdirSync(notes, { recursive: true })
  writeFileSync(join(notes, "2025-10-12-dentist.md"), "New dentist in Hamburg is Dr. Lena Hoffmann at Elbdental.\n")
  writeFileSync(join(notes, "2025-01-02-bread.md"), "Bought bread and milk at the market.\n")
  server = await startModelServer(
    byRole({
      teller: (req) => {
        if (req.lastUserText.startsWith("<task-results>")) return reply(req.lastUserText.match(/Memory says: (.*)/)?.[1] ?? "I could not find it.")
        return afterTool(req) ? { text: "" } : { toolCalls: [{ name: "delegate", args: { prompt: `Answer from memory: ${req.lastUserText}` } }] }
      },
      planner: (req) => {
        if (!afterTool(req)) return { toolCalls: [{ name: "search_memory", args: { query: "tooth doctor" } }] }
        const { hits } = JSON.parse(unwrapped(req.lastToolResults[0]!.content)) as { hits: Array<{ content: string; date: string }> }
        return { text: `Memory says: ${hits[0] ? `${hits[0].content} (${hits[0].date})` : "nothing"}` }
      },
    }),
  )
  steward = StewardProcess.start({
    DATA_DIR: dataDir,
    MODEL: "openai-compatible:scripted",
    OPENAI_COMPATIBLE_BASE_URL: server.url,
    EMBEDDING_MODEL: "openai:text-embedding-3-small",
    OPENAI_BASE_URL: embeddings.url,
    OPENAI_API_KEY: "sk-test",
  })
  // Embedded in the background at start, without being asked.
  await eventually(() => embeddings!.embedded >= 2, "the notes embedded", 20_000)
  steward.send("who is my tooth doctor?")
  await steward.waitFor((p) => p.replies.length >= 1, "the answer")
  steward.child.stdin.end()
  expect(await steward.exited).toBe(0)
  expect(steward.replies[0]).toBe("New dentist in Hamburg is Dr. Lena Hoffmann at Elbdental. (2025-10-12)")
  expect(embeddings.requests.map((r) => r.model)).toContain("text-embedding-3-small")
})
