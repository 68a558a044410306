import { convert } from "html-to-text"
import { z } from "zod"
import { defineTool, ToolError } from "./tool.ts"

// A page that has not answered within 15 s is not worth holding a worker for; the run's own
// abort still cuts it shorter.
const TIMEOUT_MS = 15_000
// Any article-sized page fits in 2 MiB; the cap keeps a worker from pulling a video or a data
// dump into memory just to throw most of it away.
const MAX_BODY_BYTES = 2 * 1024 * 1024
// Real sites redirect once or twice (http → https, login walls, trailing slashes); more is a loop.
const MAX_REDIRECTS = 5
// The text lands in the model's context window, so the default stays small and the ceiling firm.
const DEFAULT_MAX_CHARS = 20_000
const MAX_CHARS = 100_000

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

const parameters = z.object({
  url: z.string().describe("Absolute http:// or https:// URL."),
  maxChars: z
    .number()
    .int()
    .min(1)
    .max(MAX_CHARS)
    .optional()
    .describe(`Cut the returned text to this many characters (default ${DEFAULT_MAX_CHARS}).`),
})

export const fetchUrlTool = defineTool({
  id: "fetch_url",
  description:
    "Fetch a web page or text/JSON document with HTTP GET and return it as plain text (HTML is " +
    "converted to readable text). Returns the final URL after redirects, the HTTP status (error " +
    "statuses are returned, not thrown), the content type, the text and whether it was truncated. " +
    "Binary content such as images or PDFs is refused.",
  parameters,
  pattern: (args) => args.url,
  async execute({ url, maxChars = DEFAULT_MAX_CHARS }, ctx) {
    const signal = AbortSignal.any([ctx.abort, AbortSignal.timeout(TIMEOUT_MS)])
    try {
      const { response, finalUrl } = await get(httpUrl(url), signal)
      const contentType = response.headers.get("content-type") ?? ""
      const kind = textKind(contentType)
      if (kind === "binary") {
        await response.body?.cancel()
        throw new ToolError(`${finalUrl} is ${contentType}, which is not text; fetch_url only returns text, HTML and JSON`)
      }
      const body = await readCapped(response)
      // Servers that omit the content type are usually serving text; a NUL byte says otherwise.
      if (kind === "unknown" && body.bytes.includes(0)) {
        throw new ToolError(`${finalUrl} has no content type and looks binary; fetch_url only returns text`)
      }
      const decoded = decode(body.bytes, contentType)
      const text = kind === "html" ? htmlToText(decoded) : decoded
      return {
        url: finalUrl,
        status: response.status,
        contentType,
        text: text.slice(0, maxChars),
        truncated: body.truncated || text.length > maxChars,
      }
    } catch (err) {
      // A cancelled run is not the model's mistake; let the runtime see the cancellation itself.
      ctx.abort.throwIfAborted()
      if (err instanceof ToolError) throw err
      if (signal.aborted) throw new ToolError(`${url} did not answer completely within ${TIMEOUT_MS / 1000} s`)
      throw new ToolError(`fetching ${url} failed: ${causeMessage(err)}`)
    }
  },
})

function httpUrl(raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ToolError(`not a valid absolute URL: ${raw}`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ToolError(`only http and https URLs can be fetched, not ${url.protocol} (${raw})`)
  }
  return url
}

/** Follows redirects by hand because fetch's own limit (20) cannot be lowered. */
async function get(start: URL, signal: AbortSignal): Promise<{ response: Response; finalUrl: string }> {
  let url = start
  for (let hops = 0; ; hops++) {
    const response = await fetch(url, {
      redirect: "manual",
      signal,
      headers: { accept: "text/html, text/*;q=0.9, application/json;q=0.9, */*;q=0.1" },
    })
    const location = response.headers.get("location")
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return { response, finalUrl: url.href }
    await response.body?.cancel()
    if (hops === MAX_REDIRECTS) throw new ToolError(`${start.href} redirected more than ${MAX_REDIRECTS} times`)
    url = httpUrl(new URL(location, url).href)
  }
}

function textKind(contentType: string): "html" | "text" | "binary" | "unknown" {
  const mime = contentType.split(";")[0]!.trim().toLowerCase()
  if (mime === "") return "unknown"
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html"
  if (mime.startsWith("text/") || mime === "application/json" || mime.endsWith("+json")) return "text"
  // Feeds (RSS, Atom) are XML and worth reading as text.
  if (mime === "application/xml" || mime.endsWith("+xml")) return "text"
  return "binary"
}

async function readCapped(response: Response): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (response.body === null) return { bytes: Buffer.alloc(0), truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { bytes: Buffer.concat(chunks), truncated: false }
    chunks.push(value)
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel()
      return { bytes: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES), truncated: true }
    }
  }
}

function decode(bytes: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(charset ?? "utf-8")
  } catch {
    // Unknown charset labels are common enough on the web; UTF-8 is the best guess.
    decoder = new TextDecoder("utf-8")
  }
  return decoder.decode(bytes)
}

function htmlToText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: "img", format: "skip" },
      { selector: "a", options: { ignoreHref: true } },
    ],
  })
}

/** fetch reports every network failure as "fetch failed"; the useful part is in `cause`. */
function causeMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = err.cause
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code
    return cause.message || code || err.message
  }
  return err.message
}
