/**
 * Reads documents users send (docx, pdf) in a worker thread, under the limits of
 * src/untrusted/limits.ts: a zip is checked before mammoth unpacks it, a PDF's pages and the text
 * are counted as they are read. The main thread (document-text.ts) holds the time and memory limits.
 */
import mammoth from "mammoth"
import { getDocumentProxy } from "unpdf"
import { MAX_DOCUMENT_CHARS, MAX_PDF_PAGES } from "../untrusted/limits.ts"
import { serve } from "../untrusted/serve.ts"
import { checkZip } from "./zip-check.ts"

export type DocumentKind = "pdf" | "docx"

export interface DocumentJob {
  kind: DocumentKind
  bytes: Uint8Array
}

serve(async ({ kind, bytes }: DocumentJob): Promise<string> => {
  if (kind === "docx") {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    checkZip(data)
    return cut((await mammoth.extractRawText({ buffer: data })).value.trim())
  }
  // verbosity 0: pdf.js would otherwise print its warnings about damaged files on stdout.
  const pdf = await getDocumentProxy(bytes, { verbosity: 0 })
  try {
    const pages: string[] = []
    let chars = 0
    const readable = Math.min(pdf.numPages, MAX_PDF_PAGES)
    for (let number = 1; number <= readable && chars <= MAX_DOCUMENT_CHARS; number++) {
      const content = await (await pdf.getPage(number)).getTextContent()
      const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("")
      const page = `--- page ${number} of ${pdf.numPages} ---\n${text.trim()}`
      pages.push(page)
      chars += page.length
    }
    const left = pdf.numPages - pages.length
    const text = cut(pages.join("\n\n"))
    return left > 0 ? `${text}\n\n--- ${left} more pages not read (the limit is ${MAX_PDF_PAGES} pages, ${MAX_DOCUMENT_CHARS} characters) ---` : text
  } finally {
    await pdf.destroy()
  }
})

/** The text up to MAX_DOCUMENT_CHARS, and a line saying when more was left out. */
function cut(text: string): string {
  if (text.length <= MAX_DOCUMENT_CHARS) return text
  return `${text.slice(0, MAX_DOCUMENT_CHARS)}\n\n--- the rest is not read (the limit is ${MAX_DOCUMENT_CHARS} characters) ---`
}
