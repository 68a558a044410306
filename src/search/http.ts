import type { z } from "zod"
import { MAX_SEARCH_RESPONSE_BYTES } from "../untrusted/limits.ts"
import { readCapped } from "../web/guarded-fetch.ts"

/** A failed search, worded for the model that asked for it. What the search API or the network
 *  said (`detail`) is for the log: it can name the owner's internal hosts and accounts, and the
 *  model relays what it reads. */
export class SearchError extends Error {
  override name = "SearchError"
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message)
  }
}

/**
 * One request to a search API, its JSON answer checked against `shape`. Every way it can go
 * wrong — unreachable, slow, rate limited, refused, a server error, an answer that is not the
 * expected JSON — is a SearchError saying what happened and whether trying later may help.
 */
export async function requestJson<T>(provider: string, url: URL, init: RequestInit, shape: z.ZodType<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  const deadline = AbortSignal.timeout(timeoutMs)
  let response: Response
  let body: string
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.any([signal, deadline]) })
    const read = await readCapped(response, MAX_SEARCH_RESPONSE_BYTES)
    if (read.truncated) throw new SearchError(`${provider} search answered with more than ${MAX_SEARCH_RESPONSE_BYTES / 1024 / 1024} MiB, which no search result needs; not read`)
    body = read.bytes.toString("utf8")
  } catch (error) {
    if (error instanceof SearchError) throw error
    signal.throwIfAborted()
    if (deadline.aborted) throw new SearchError(`${provider} search did not answer within ${timeoutMs / 1000} s; try again later`)
    throw new SearchError(`${provider} search could not be reached${codeOf(error)}`, causeOf(error))
  }
  if (!response.ok) throw new SearchError(statusMessage(provider, response), body.slice(0, 2000).trim() || undefined)
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    throw new SearchError(`${provider} search answered with something that is not JSON (${response.headers.get("content-type") ?? "no content type"})`, body.slice(0, 2000))
  }
  const parsed = shape.safeParse(json)
  if (!parsed.success) throw new SearchError(`${provider} search answered with JSON of an unexpected shape: ${parsed.error.issues[0]?.message ?? ""}`)
  return parsed.data
}

function statusMessage(provider: string, response: Response): string {
  const status = `HTTP ${response.status}`
  if (response.status === 429) {
    const retryAfter = response.headers.get("retry-after")
    return `${provider} search is rate limited (${status}); try again ${retryAfter ? `in ${retryAfter} s` : "later"} or do without searching`
  }
  if (response.status === 401 || response.status === 403) return `${provider} search refused the request, probably the API key or the instance's settings (${status}); searching will not work until the owner fixes it`
  if (response.status >= 500) return `${provider} search failed on its side (${status}); try again later`
  return `${provider} search rejected the request (${status})`
}

/** The system error code of a failed connection (ECONNREFUSED, ENOTFOUND…): what went wrong
 *  without the address it went wrong at. */
function codeOf(error: unknown): string {
  const code = ((error as Error | undefined)?.cause as NodeJS.ErrnoException | undefined)?.code
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? ` (${code})` : ""
}

/** fetch says "fetch failed"; the reason is in `cause`. */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  return error.cause instanceof Error ? error.cause.message || String((error.cause as NodeJS.ErrnoException).code) : error.message
}
