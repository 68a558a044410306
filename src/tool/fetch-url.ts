import { z } from "zod"
import { AddressPolicy, BlockedDestination, type AllowList } from "../web/address-policy.ts"
import { charsetOf, decodeText } from "../web/decode.ts"
import { GuardedFetch, readCapped, RequestTimedOut, TooManyRedirects, type Resolve } from "../web/guarded-fetch.ts"
import { ParseRefused } from "../untrusted/isolated.ts"
import { HtmlToText } from "../web/html-text.ts"
import { fetchNeedsUser } from "../trust/named-hosts.ts"
import { defineTool, ToolError } from "./tool.ts"

// A page that has not answered within 15 s is not worth holding a worker for; the run's own
// abort still cuts it shorter.
const DEFAULT_TIMEOUT_MS = 15_000
// Flattened HTML converts in well under a second; a page still busy after this is not worth more.
const CONVERT_BUDGET_MS = 10_000
// The text lands in the model's context window, so the default stays small and the ceiling firm.
const DEFAULT_MAX_CHARS = 20_000
const MAX_CHARS = 100_000
const ACCEPT = "text/html, text/*;q=0.9, application/json;q=0.9, */*;q=0.1"

export interface FetchUrlSettings {
  /** FETCH_MAX_BYTES: the most of a body read; the rest is cut off (truncated). */
  maxBytes: number
  /** FETCH_ALLOW_HOSTS: non-public hosts and networks the operator lets the model reach. */
  allowHosts: AllowList
  timeoutMs?: number
  /** Name resolution; tests give a stub so that no lookup leaves the machine. */
  resolve?: Resolve
}

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

/**
 * fetch_url: a model-chosen URL, so it reaches only public addresses (see AddressPolicy and
 * GuardedFetch) unless FETCH_ALLOW_HOSTS says otherwise, reads at most FETCH_MAX_BYTES, and
 * converts HTML in a worker thread.
 */
export function createFetchUrlTool(settings: FetchUrlSettings) {
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const client = new GuardedFetch({ policy: new AddressPolicy(settings.allowHosts), timeoutMs, resolve: settings.resolve })
  const html = new HtmlToText(CONVERT_BUDGET_MS)
  return defineTool({
    id: "fetch_url",
    description:
      "Fetch a web page or text/JSON document with HTTP GET and return it as plain text (HTML is " +
      "converted to readable text). Returns the final URL after redirects, the HTTP status (error " +
      "statuses are returned, not thrown), the content type, the text and whether it was truncated. " +
      "Binary content such as images or PDFs is refused, and so are addresses on private networks.",
    parameters,
    pattern: (args) => args.url,
    untrustedOutput: true,
    guardedWhenTainted: (args, ctx, read) => fetchNeedsUser(args.url, ctx, read),
    async execute({ url, maxChars = DEFAULT_MAX_CHARS }, ctx) {
      try {
        return await client.get(httpUrl(url), ctx.abort, ACCEPT, async (response, finalUrl) => {
          const contentType = response.headers.get("content-type") ?? ""
          const kind = textKind(contentType)
          if (kind === "binary") {
            await response.body?.cancel()
            throw new ToolError(`${finalUrl} is ${contentType}, which is not text; fetch_url only returns text, HTML and JSON`)
          }
          const body = await readCapped(response, settings.maxBytes)
          // Servers that omit the content type are usually serving text; a NUL byte says otherwise.
          if (kind === "unknown" && body.bytes.includes(0)) {
            throw new ToolError(`${finalUrl} has no content type and looks binary; fetch_url only returns text`)
          }
          const converted =
            kind === "html" ? await html.convert({ bytes: body.bytes, charset: charsetOf(contentType), maxChars }, ctx.abort) : { text: decodeText(body.bytes, charsetOf(contentType)), cut: false }
          return {
            url: finalUrl,
            status: response.status,
            contentType,
            text: converted.text.slice(0, maxChars),
            truncated: body.truncated || converted.cut || converted.text.length > maxChars,
          }
        })
      } catch (err) {
        // A cancelled run is not the model's mistake; let the runtime see the cancellation itself.
        ctx.abort.throwIfAborted()
        if (err instanceof ToolError) throw err
        if (err instanceof BlockedDestination) throw new ToolError(`refused: ${err.message}`)
        if (err instanceof TooManyRedirects) throw new ToolError(err.message)
        if (err instanceof ParseRefused) throw new ToolError(`${url} was not read: ${err.message}`)
        if (err instanceof RequestTimedOut) throw new ToolError(`${url} ${err.message}`)
        throw new ToolError(`fetching ${url} failed: ${causeMessage(err)}`)
      }
    },
  })
}

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

function textKind(contentType: string): "html" | "text" | "binary" | "unknown" {
  const mime = contentType.split(";")[0]!.trim().toLowerCase()
  if (mime === "") return "unknown"
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html"
  if (mime.startsWith("text/") || mime === "application/json" || mime.endsWith("+json")) return "text"
  // Feeds (RSS, Atom) are XML and worth reading as text.
  if (mime === "application/xml" || mime.endsWith("+xml")) return "text"
  return "binary"
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
