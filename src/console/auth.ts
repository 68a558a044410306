import { randomBytes } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { sameSecret } from "../access/same-secret.ts"

/** The session cookie's name on the admin port the request came in on. Browsers keep cookies per
 *  host, not per port: two Steward processes on one machine (a cluster, one admin port each) would
 *  otherwise overwrite each other's session and sign the owner out of the other console. */
export const sessionCookie = (req: IncomingMessage) => `steward_console_${req.socket.localPort ?? 0}`
/** A signed-in browser stays signed in this long, then signs in again. */
const SESSION_MS = 12 * 3600_000

/** How a request proved it is the owner's: a bearer token (scripts) or the session cookie the
 *  login form set (the browser, which also sends it on requests another site starts). */
export type Credential = "bearer" | "session"

/**
 * The owner console's sign-in: ADMIN_TOKEN as a bearer token, or typed once into the login form
 * for a session cookie (`HttpOnly`: no script reads it; `SameSite=Strict`: no other site's page
 * sends it). Sessions live in this process's memory: a restart signs the browser out.
 */
export class ConsoleAuth {
  private readonly sessions = new Map<string, number>()

  constructor(private readonly token: string) {}

  /** The credential the request carries, "wrong" for a bearer token that is not ADMIN_TOKEN, or
   *  undefined for none. */
  check(req: IncomingMessage): Credential | "wrong" | undefined {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]
    if (bearer !== undefined) return sameSecret(bearer.trim(), this.token) ? "bearer" : "wrong"
    const session = cookie(req, sessionCookie(req))
    const until = session === undefined ? undefined : this.sessions.get(session)
    if (until === undefined) return undefined
    if (until > Date.now()) return "session"
    this.sessions.delete(session!)
    return undefined
  }

  /** A new session's Set-Cookie header when `given` (from `req`) is ADMIN_TOKEN; `Secure` when the
   *  browser reached the console over https (a TLS proxy in front says so), so it never travels in clear. */
  signIn(req: IncomingMessage, given: string, secure = false): string | undefined {
    if (!sameSecret(given, this.token)) return undefined
    const now = Date.now()
    for (const [id, until] of this.sessions) if (until <= now) this.sessions.delete(id)
    const id = randomBytes(32).toString("base64url")
    this.sessions.set(id, now + SESSION_MS)
    return `${sessionCookie(req)}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_MS / 1000}${secure ? "; Secure" : ""}`
  }

  /** Ends the request's session; the Set-Cookie header that clears it in the browser. */
  signOut(req: IncomingMessage): string {
    const session = cookie(req, sessionCookie(req))
    if (session !== undefined) this.sessions.delete(session)
    return `${sessionCookie(req)}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`
  }
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=")
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}
