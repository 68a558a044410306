import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { OutgoingFile } from "../../src/core/types.ts"
import { readFileTool } from "../../src/tool/read-file.ts"
import { sendFileTool } from "../../src/tool/send-file.ts"
import type { Capabilities } from "../../src/tool/capabilities.ts"
import type { ToolContext, ToolDefinition } from "../../src/tool/tool.ts"
import { docxBombs } from "./bombs.ts"
import { storedZip, twoPagePdf } from "./zip.ts"

let dir: string
const sent: Array<{ file: OutgoingFile; caption: string; conversation: string }> = []

function context(): ToolContext {
  const replies = { reply: async () => {}, sendFile: async (caller: { conversation: string }, file: OutgoingFile, caption: string) => void sent.push({ file, caption, conversation: caller.conversation }) }
  return { role: "worker", agent: "default", conversation: "telegram:1", user: "telegram:1", sessionId: "s", callId: "c", abort: new AbortController().signal, ...({ workspaceDir: dir, replies } as unknown as Capabilities) }
}
const run = (tool: ToolDefinition<any>, args: unknown): Promise<any> => tool.execute!(tool.parameters.parse(args), context())

const DOCX = storedZip({
  "[Content_Types].xml":
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  "_rels/.rels":
    '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
  "word/document.xml":
    '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Budget for 2027</w:t></w:r></w:p><w:p><w:r><w:t>Travel: 300 EUR</w:t></w:r></w:p></w:body></w:document>',
})

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "steward-documents-"))
  // The user's own workspace, as the tools see it.
  await mkdir(path.join(dir, "telegram-1"))
  sent.length = 0
})
afterEach(() => rm(dir, { recursive: true, force: true }))

describe("read_file on documents", () => {
  it("returns a PDF's text with a marker before each page", async () => {
    await writeFile(path.join(dir, "telegram-1", "report.pdf"), twoPagePdf("Hello page one", "Second page text"))
    const read = await run(readFileTool, { path: "report.pdf" })
    expect(read.content).toBe("--- page 1 of 2 ---\nHello page one\n\n--- page 2 of 2 ---\nSecond page text")
    expect(read.totalLines).toBe(5)
    // Paged like any text.
    expect((await run(readFileTool, { path: "report.pdf", offset: 4, limit: 2 })).content).toBe("--- page 2 of 2 ---\nSecond page text")
  })

  it("returns a Word document's paragraphs as lines", async () => {
    await writeFile(path.join(dir, "telegram-1", "budget.docx"), DOCX)
    expect((await run(readFileTool, { path: "budget.docx" })).content).toBe("Budget for 2027\n\nTravel: 300 EUR")
  })

  it("refuses a zip bomb with a one-line reason the model relays, and reads the next document", async () => {
    const bombs = await docxBombs(100 * 1024 * 1024)
    await writeFile(path.join(dir, "telegram-1", "bomb.docx"), bombs["one block named by many entries"]!)
    await expect(run(readFileTool, { path: "bomb.docx" })).rejects.toThrow(/^bomb\.docx was refused: it unpacks to more than 64 MiB \(a zip bomb\?\)$/)
    await writeFile(path.join(dir, "telegram-1", "budget.docx"), DOCX)
    expect((await run(readFileTool, { path: "budget.docx" })).content).toBe("Budget for 2027\n\nTravel: 300 EUR")
  })

  it("says why a damaged document cannot be read", async () => {
    await writeFile(path.join(dir, "telegram-1", "broken.pdf"), "not a pdf at all")
    await expect(run(readFileTool, { path: "broken.pdf" })).rejects.toThrow(/^broken\.pdf could not be read as pdf: /)
    await writeFile(path.join(dir, "telegram-1", "broken.docx"), "not a zip")
    await expect(run(readFileTool, { path: "broken.docx" })).rejects.toThrow(/^broken\.docx could not be read as docx: /)
  })
})

describe("send_file", () => {
  it("hands the outbox the file's absolute path, name and type, and the caption", async () => {
    await writeFile(path.join(dir, "telegram-1", "chart.png"), "png")
    expect(await run(sendFileTool, { path: "./chart.png", caption: " Sales " })).toEqual({ sent: "chart.png", bytes: 3 })
    expect(sent).toEqual([{ file: { path: path.join(dir, "telegram-1", "chart.png"), name: "chart.png", mimeType: "image/png" }, caption: "Sales", conversation: "telegram:1" }])
  })

  it("refuses what it cannot send: outside the workspace, a folder, an empty file, a missing one", async () => {
    await writeFile(path.join(dir, "telegram-1", "empty.txt"), "")
    await expect(run(sendFileTool, { path: "../etc/passwd" })).rejects.toThrow(/outside the workspace/)
    await expect(run(sendFileTool, { path: "." })).rejects.toThrow(/is not a file/)
    await expect(run(sendFileTool, { path: "empty.txt" })).rejects.toThrow(/is empty/)
    await expect(run(sendFileTool, { path: "nope.txt" })).rejects.toThrow(/no such file: nope\.txt/)
    expect(sent).toEqual([])
  })
})
