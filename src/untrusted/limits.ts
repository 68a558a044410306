/**
 * The limits every parser of untrusted bytes runs under (documents users send, pages and API
 * answers fetched from the web). A file or page over one of them is refused with a one-line
 * reason; the server, and every other conversation, carries on.
 */

/** The most a zip-based document (docx, and any other office format) may unpack to, all entries
 *  together, counted while inflating (the sizes a zip declares may lie). */
export const MAX_UNZIPPED_BYTES = 64 * 1024 * 1024
/** The most entries a zip-based document may hold; real ones have dozens. */
export const MAX_ZIP_ENTRIES = 2000
/** PDF pages read; the rest of a longer PDF is left out, and said so. */
export const MAX_PDF_PAGES = 500
/** Characters of text a document yields; the rest is left out, and said so. */
export const MAX_DOCUMENT_CHARS = 2_000_000
/** How long one document may take to read. */
export const DOCUMENT_TIME_MS = 30_000
/** The JavaScript heap of a parser's worker thread. */
export const PARSER_HEAP_MB = 256
/** How much a parse may grow the process's resident memory (buffers included, which the heap
 *  limit does not count) before its worker is stopped. */
export const PARSER_MEMORY_GROWTH_MB = 512
/** The most of a web search API's answer read (after decompression; fetch_url's is FETCH_MAX_BYTES). */
export const MAX_SEARCH_RESPONSE_BYTES = 4 * 1024 * 1024
