import type { IncomingMessage, ServerResponse } from "node:http"
import type { Logger } from "pino"
import { isActionPath, runAction } from "./actions.ts"
import { loadAssets, type Asset, type AssetName } from "./assets.ts"
import { ConsoleAuth } from "./auth.ts"
import { readBody, redirect, send, sendJson, sameOrigin } from "./http.ts"
import { SignInLimit } from "./sign-in-limit.ts"
import { consoleSnapshot, type ConsoleSnapshot, type ConsoleSources } from "./snapshot.ts"

/** Public: the login page needs its style; neither holds anything of the owner's. */
const PUBLIC_ASSETS: Record<string, AssetName> = { "/console/console.css": "console.css", "/console/console.js": "console.js", "/favicon.svg": "favicon.svg" }
const LOGIN_BODY_MAX = 4096
const FAILED_MARK = "<!--failed-->"
const FAILED_TEXT = '<p class="failed" role="alert">That is not the console token.</p>'
const LIMITED_TEXT = (seconds: number) => `<p class="failed" role="alert">Too many wrong tokens from this address: try again in ${seconds} s.</p>`
/** Open tabs each read the state every 2 s; within this, they share one read of the store. */
const SNAPSHOT_SHARED_MS = 1000

/**
 * The owner console on the admin server, when ADMIN_TOKEN is set:
 * `GET /` the dashboard, `GET|POST /login`, `POST /logout`, `GET /console/state` (its data),
 * the action POSTs (src/console/actions.ts) and the page's files. Answers false for any other
 * path, which the admin server then answers itself.
 */
export class ConsoleRoutes {
  private readonly auth: ConsoleAuth
  private readonly limit = new SignInLimit()
  private readonly assets = loadAssets()
  private latest?: { at: number; snapshot: Promise<ConsoleSnapshot> }

  constructor(
    token: string,
    private readonly sources: ConsoleSources,
    private readonly log: Logger,
  ) {
    this.auth = new ConsoleAuth(token)
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const ours = Object.hasOwn(PUBLIC_ASSETS, path) || path === "/login" || path === "/" || path === "/logout" || path === "/console/state" || isActionPath(path)
    if (ours) await this.route(req, res, path, req.method === "HEAD" ? "GET" : (req.method ?? "GET"))
    return ours
  }

  private async route(req: IncomingMessage, res: ServerResponse, path: string, method: string): Promise<void> {
    const asset = Object.hasOwn(PUBLIC_ASSETS, path) ? PUBLIC_ASSETS[path] : undefined
    if (asset) return method === "GET" ? this.file(req, res, this.assets[asset]) : this.refuse(req, res, 405, "GET")
    if (path === "/login") {
      if (method === "GET") return this.file(req, res, this.assets["login.html"])
      if (method === "POST") return this.login(req, res)
      return this.refuse(req, res, 405, "GET or POST")
    }
    const credential = this.auth.check(req)
    if (credential === undefined && path === "/" && method === "GET") {
      req.resume()
      return redirect(res, "/login")
    }
    if (credential === "bearer" || credential === "wrong") {
      const wait = this.limit.retryAfter(address(req))
      if (wait > 0) return this.refuse(req, res, 429, `too many wrong tokens from this address; try again in ${wait} s`, { "retry-after": String(wait) })
      if (credential === "wrong") this.limit.wrong(address(req))
    }
    if (credential === undefined || credential === "wrong") return this.refuse(req, res, 401, credential === "wrong" ? "wrong bearer token" : "sign in first: POST /login, or Authorization: Bearer <ADMIN_TOKEN>")
    if (method === "GET" && path === "/") return this.file(req, res, this.assets["index.html"])
    if (method === "GET" && path === "/console/state") {
      req.resume()
      const state = JSON.stringify(await this.snapshot())
      return send(res, 200, "application/json; charset=utf-8", this.sources.redact?.(state) ?? state)
    }
    if (method !== "POST") return this.refuse(req, res, 405, "POST")
    // A bearer token is never sent by a browser on its own; a cookie is, so its requests must
    // come from the console's own page.
    if (credential === "session" && !sameOrigin(req, false)) return this.refuse(req, res, 403, "a request from another site")
    if (path === "/logout") {
      req.resume()
      return redirect(res, "/login", { "set-cookie": this.auth.signOut(req) })
    }
    // JSON only: a cross-site form or a simple fetch cannot send it without the browser asking first.
    if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) return this.refuse(req, res, 415, "send application/json")
    req.resume()
    const outcome = await runAction(this.sources.store, path)
    // The page reads the state again at once to show what the action changed.
    this.latest = undefined
    this.log.info({ path, outcome: outcome.body }, "owner console action")
    sendJson(res, outcome.status, outcome.body)
  }

  private snapshot(): Promise<ConsoleSnapshot> {
    if (this.latest && Date.now() - this.latest.at < SNAPSHOT_SHARED_MS) return this.latest.snapshot
    const snapshot = consoleSnapshot(this.sources)
    const latest = { at: Date.now(), snapshot }
    this.latest = latest
    // A failed read is not shared: the next request tries again.
    snapshot.catch(() => {
      if (this.latest === latest) this.latest = undefined
    })
    return snapshot
  }

  private async login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!sameOrigin(req, true)) return this.refuse(req, res, 403, "a sign-in from another site")
    const body = await readBody(req, LOGIN_BODY_MAX)
    if (body === undefined) return this.refuse(req, res, 413, "too large")
    const wait = this.limit.retryAfter(address(req))
    if (wait > 0) return this.loginPage(res, 429, LIMITED_TEXT(wait), { "retry-after": String(wait) })
    // Only ever adds Secure, so a forged header can only keep the cookie off plain http.
    const https = req.headers["x-forwarded-proto"] === "https" || /^https:/i.test(req.headers.origin ?? "")
    const cookie = this.auth.signIn(req, new URLSearchParams(body).get("token") ?? "", https)
    if (cookie) return redirect(res, "/", { "set-cookie": cookie })
    this.limit.wrong(address(req))
    this.log.warn({ from: address(req) }, "owner console: a sign-in with a wrong token")
    this.loginPage(res, 401, FAILED_TEXT)
  }

  private loginPage(res: ServerResponse, status: number, alert: string, headers: Record<string, string> = {}): void {
    send(res, status, this.assets["login.html"].type, this.assets["login.html"].body.toString("utf8").replace(FAILED_MARK, alert), headers)
  }

  private file(req: IncomingMessage, res: ServerResponse, asset: Asset): void {
    req.resume()
    if (req.headers["if-none-match"] === asset.etag) return send(res, 304, asset.type, "", { etag: asset.etag, "cache-control": "no-cache" })
    send(res, 200, asset.type, asset.body, { etag: asset.etag, "cache-control": "no-cache" })
  }

  private refuse(req: IncomingMessage, res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
    req.resume()
    sendJson(res, status, { error }, headers)
  }
}

/** Who is guessing: the peer's address (a reverse proxy's own, behind one). */
const address = (req: IncomingMessage) => req.socket.remoteAddress ?? ""
