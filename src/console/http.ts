import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * What every console response carries. Scripts, styles, images and requests come from Steward
 * itself and nowhere else (no inline script or style: text a user or model wrote cannot become
 * code even if some page bug let it into the markup); no page may frame the console.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ")

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // Not no-referrer: with it Chromium sends `Origin: null` on the console's own form posts.
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
}

export function send(res: ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "cache-control": "no-store", "content-type": type, ...headers }).end(body)
}

export function sendJson(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(data), headers)
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  send(res, 303, "text/plain; charset=utf-8", `see ${location}`, { location, ...headers })
}

/**
 * Whether a browser request comes from the console's own pages. A browser names the page that
 * started a POST in `Origin` (and `Sec-Fetch-Site`); another site's form or script names itself,
 * so its request is refused even though the browser would attach the session cookie (which
 * SameSite=Strict already withholds from other sites). A request without `Origin` is not a
 * browser's: it passes when `allowNoOrigin` (the login form, which needs no cookie).
 */
export function sameOrigin(req: IncomingMessage, allowNoOrigin: boolean): boolean {
  const site = req.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return false
  const origin = req.headers.origin
  if (origin === undefined) return allowNoOrigin
  // Behind a TLS proxy that sends its upstream's address as Host (nginx's default), the name the
  // browser used arrives as X-Forwarded-Host. A page of another site cannot set that header on a
  // request the browser sends without asking first (a custom header needs a CORS preflight the
  // console never grants), so it is as much the console's own name as Host is.
  const names = [req.headers.host, ...String(req.headers["x-forwarded-host"] ?? "").split(",").map((name) => name.trim())]
  try {
    const host = new URL(origin).host
    return names.some((name) => name !== undefined && name !== "" && name === host)
  } catch {
    return false
  }
}

/** The request's body as text, refused past `maxBytes` (undefined). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > maxBytes) {
      req.resume()
      return undefined
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString("utf8")
}
