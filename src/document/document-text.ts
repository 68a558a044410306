import { IsolatedWorkers, ownedBuffer, type IsolationLimits } from "../untrusted/isolated.ts"
import { DOCUMENT_TIME_MS, PARSER_HEAP_MB, PARSER_MEMORY_GROWTH_MB } from "../untrusted/limits.ts"
import type { DocumentJob, DocumentKind } from "./document-worker.ts"

export type { DocumentKind } from "./document-worker.ts"

/** Documents are read whole to get at their text, and PDFs with images run large: a higher cap
 *  than for text files, still bounded. */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024

// Under tsx (tests, `npm run dev`) the .mjs entry registers the loader; the build emits the .js.
const WORKER_ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./document-worker.mjs" : "./document-worker.js", import.meta.url)

/** The time and memory a document may take (src/untrusted/limits.ts). */
export const DOCUMENT_LIMITS: IsolationLimits = { timeMs: DOCUMENT_TIME_MS, heapMb: PARSER_HEAP_MB, memoryGrowthMb: PARSER_MEMORY_GROWTH_MB }

/** The document formats read_file turns into text, by the name's extension. */
export function documentKind(name: string): DocumentKind | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase()
  return extension === "pdf" || extension === "docx" ? extension : undefined
}

/**
 * Reads the text of a PDF (each page introduced by `--- page N of M ---`, so the model can cite
 * pages) or of a Word document (docx: paragraphs as lines) in worker threads, under `limits` and
 * the zip, page and character limits of src/untrusted/limits.ts. Scanned PDFs hold pictures, not
 * text: their pages come out empty.
 */
export class DocumentReader {
  private readonly workers: IsolatedWorkers<DocumentJob, string>

  constructor(limits: IsolationLimits = DOCUMENT_LIMITS) {
    this.workers = new IsolatedWorkers(WORKER_ENTRY, limits)
  }

  /** Throws ParseRefused for a file over a limit (a zip bomb, a PDF that would fill the memory or
   *  take too long), an Error with the parser's reason for a file that is not a readable document
   *  of that kind. `data` is moved to the worker when it owns its memory: do not use it after. */
  text(kind: DocumentKind, data: Uint8Array, signal: AbortSignal): Promise<string> {
    return this.workers.run({ kind, bytes: data }, signal, ownedBuffer(data))
  }
}

const reader = new DocumentReader()

/** A document's text, read by the server's one DocumentReader. */
export const documentText = (kind: DocumentKind, data: Uint8Array, signal: AbortSignal): Promise<string> => reader.text(kind, data, signal)
