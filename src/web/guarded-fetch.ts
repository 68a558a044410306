import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns"
import { isIP, type LookupFunction } from "node:net"
import { Agent, buildConnector, fetch, type Response } from "undici"
import { AddressPolicy, BlockedDestination } from "./address-policy.ts"

// Real sites redirect once or twice (http → https, login walls, trailing slashes); more is a loop.
export const MAX_REDIRECTS = 5
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

/** Resolves a name to all its addresses (node's dns.lookup shape); tests give a stub. */
export type Resolve = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void

export interface GuardedFetchOptions {
  policy: AddressPolicy
  /** How long a whole request, body included, may take. */
  timeoutMs: number
  resolve?: Resolve
}

/** A redirect the client refuses to follow further; the caller words it for the model. */
export class TooManyRedirects extends Error {
  override name = "TooManyRedirects"
}

/** The request's own time ran out (not the caller's abort). */
export class RequestTimedOut extends Error {
  override name = "RequestTimedOut"
}

/**
 * HTTP GETs that only reach what the AddressPolicy allows, at every hop:
 *  - a literal address in the URL is checked before the request, and again where the socket is
 *    opened (node connects to a literal without a lookup);
 *  - a name is resolved by the connection's own lookup, which checks EVERY address and hands the
 *    socket only those checked ones — the address connected to is the address checked, so a name
 *    that resolves differently a moment later (DNS rebinding) gains nothing;
 *  - redirects are followed by hand, each hop checked the same way, at most MAX_REDIRECTS.
 * The request's timeout is a timer held until the response is read, plus undici's own header and
 * body timeouts: an AbortSignal.timeout that nothing references can be collected before it fires.
 */
export class GuardedFetch {
  private readonly agent: Agent

  constructor(private readonly options: GuardedFetchOptions) {
    const lookup = guardedLookup(options.policy, options.resolve ?? (dnsLookup as Resolve))
    const connect = buildConnector({ lookup })
    this.agent = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: (target, callback) => {
        const refusal = isIP(target.hostname.replace(/^\[(.*)\]$/, "$1")) ? options.policy.addressRefusal(target.hostname, target.hostname.replace(/^\[(.*)\]$/, "$1")) : undefined
        if (refusal) return callback(new BlockedDestination(refusal), null)
        connect(target, callback)
      },
    })
  }

  /**
   * GETs `start`, following redirects; `read` consumes the final response while the timeout still
   * runs. Throws BlockedDestination, TooManyRedirects, RequestTimedOut, or the caller's abort reason.
   */
  async get<T>(start: URL, signal: AbortSignal, accept: string, read: (response: Response, finalUrl: string) => Promise<T>): Promise<T> {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new RequestTimedOut(`did not answer completely within ${this.options.timeoutMs / 1000} s`)), this.options.timeoutMs)
    const forward = () => controller.abort(signal.reason)
    signal.addEventListener("abort", forward, { once: true })
    try {
      signal.throwIfAborted()
      let url = start
      for (let hops = 0; ; hops++) {
        const refusal = this.options.policy.hostRefusal(url.hostname)
        if (refusal) throw new BlockedDestination(refusal)
        const response = await fetch(url, { redirect: "manual", signal: controller.signal, dispatcher: this.agent, headers: { accept } })
        const location = response.headers.get("location")
        if (!REDIRECT_STATUSES.has(response.status) || location === null) return await read(response, url.href)
        await response.body?.cancel()
        if (hops === MAX_REDIRECTS) throw new TooManyRedirects(`${start.href} redirected more than ${MAX_REDIRECTS} times`)
        url = new URL(location, url)
        if (url.protocol !== "http:" && url.protocol !== "https:") throw new BlockedDestination(`${start.href} redirected to ${url.protocol} (${url.href}), which fetch_url does not follow`)
      }
    } catch (error) {
      throw controller.signal.aborted ? controller.signal.reason : unwrap(error)
    } finally {
      clearTimeout(timer)
      signal.removeEventListener("abort", forward)
    }
  }
}

/** Reads at most `maxBytes` of the body, cancelling the rest. The count is of the bytes the body
 *  yields, after fetch has decompressed them: a compressed bomb stops at the cap too. */
export async function readCapped(response: { body: { getReader(): ReadableStreamDefaultReader<Uint8Array> } | null }, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (response.body === null) return { bytes: Buffer.alloc(0), truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { bytes: Buffer.concat(chunks), truncated: false }
    chunks.push(value)
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      return { bytes: Buffer.concat(chunks).subarray(0, maxBytes), truncated: true }
    }
  }
}

/** A lookup for net.connect that resolves the name, refuses it if any address is refused, and
 *  otherwise answers with exactly the addresses it checked. */
function guardedLookup(policy: AddressPolicy, resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, "", 4)
      const refusal = addresses.length === 0 ? `${hostname} has no address` : addresses.map((entry) => policy.addressRefusal(hostname, entry.address)).find((reason) => reason !== undefined)
      if (refusal) return callback(new BlockedDestination(refusal), "", 4)
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses
      if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: "ENOTFOUND" }), "", 4)
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, wanted)
      callback(null, wanted[0]!.address, wanted[0]!.family)
    })
  }
}

/** undici reports every network failure as "fetch failed"; what happened is in `cause`. */
function unwrap(error: unknown): unknown {
  let current = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof BlockedDestination) return current
    current = current.cause
  }
  return error
}
