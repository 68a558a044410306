import mammoth from "mammoth"
import { extractText, getDocumentProxy } from "unpdf"

/** Documents are read whole to get at their text, and PDFs with images run large: a higher cap
 *  than for text files, still bounded. */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024

type Kind = "pdf" | "docx"

/** The document formats read_file turns into text, by the name's extension. */
export function documentKind(name: string): Kind | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase()
  return extension === "pdf" || extension === "docx" ? extension : undefined
}

/**
 * The text of a PDF (each page introduced by `--- page N of M ---`, so the model can cite pages)
 * or of a Word document (docx: paragraphs as lines). Throws with the parser's reason when the
 * file is not a readable document of that kind. Scanned PDFs hold pictures, not text: their
 * pages come out empty.
 */
export async function documentText(kind: Kind, data: Uint8Array): Promise<string> {
  if (kind === "docx") return (await mammoth.extractRawText({ buffer: Buffer.from(data) })).value.trim()
  // verbosity 0: pdf.js would otherwise print its warnings about damaged files on stdout.
  const pdf = await getDocumentProxy(new Uint8Array(data), { verbosity: 0 })
  try {
    const { totalPages, text } = await extractText(pdf, { mergePages: false })
    return text.map((page, index) => `--- page ${index + 1} of ${totalPages} ---\n${page.trim()}`).join("\n\n")
  } finally {
    await pdf.destroy()
  }
}
