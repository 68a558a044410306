import type { IncomingMessage, ServerResponse } from "node:http"
import type { Logger } from "pino"
import { isActionPath, runAction } from "./actions.ts"
import { loadAssets, type Asset, type AssetName } from "./assets.ts"
import { ConsoleAuth } from "./auth.ts"
import { readBody, redirect, send, sendJson, sameOrigin } from "./http.ts"
import { consoleSnapshot, type ConsoleSources } from "./snapshot.ts"

/** Public: the login page needs its style; neither holds anything of the owner's. */
const PUBLIC_ASSETS: Record<string, AssetName> = { "/console/console.css": "console.css", "/console/console.js": "console.js", "/favicon.svg": "favicon.svg" }
const LOGIN_BODY_MAX = 4096
const FAILED_MARK = "<!--failed-->"
const FAILED_TEXT = '<p class="failed" role="alert">That is not the console token.</p>'

/**
 * The owner console on the admin server, when ADMIN_TOKEN is set:
 * `GET /` the dashboard, `GET|POST /login`, `POST /logout`, `GET /console/state` (its data),
 * the action POSTs (src/console/actions.ts) and the page's files. Answers false for any other
 * path, which the admin server then answers itself.
 */
export class ConsoleRoutes {
  private readonly auth: ConsoleAuth
  private readonly assets = loadAssets()

  constructor(
    token: string,
    private readonly sources: ConsoleSources,
    private readonly log: Logger,
  ) {
    this.auth = new ConsoleAuth(token)
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const method = req.method === "HEAD" ? "GET" : req.method
    const asset = PUBLIC_ASSETS[path]
    if (asset && method === "GET") return this.file(req, res, this.assets[asset]), true
    if (path === "/login") {
      if (method === "GET") return this.file(req, res, this.assets["login.html"]), true
      if (method === "POST") return await this.login(req, res), true
      return this.refuse(req, res, 405, "GET or POST"), true
    }
    const known = path === "/" || path === "/logout" || path === "/console/state" || isActionPath(path)
    if (!known) return false
    const credential = this.auth.check(req)
    if (credential === undefined && path === "/" && method === "GET") return redirect(res, "/login"), req.resume(), true
    if (credential === undefined || credential === "wrong") return this.refuse(req, res, 401, credential === "wrong" ? "wrong bearer token" : "sign in first: POST /login, or Authorization: Bearer <ADMIN_TOKEN>"), true
    if (method === "GET" && path === "/") return this.file(req, res, this.assets["index.html"]), true
    if (method === "GET" && path === "/console/state") return req.resume(), sendJson(res, 200, await consoleSnapshot(this.sources)), true
    if (method !== "POST") return this.refuse(req, res, 405, "POST"), true
    // A bearer token is never sent by a browser on its own; a cookie is, so its requests must
    // come from the console's own page.
    if (credential === "session" && !sameOrigin(req, false)) return this.refuse(req, res, 403, "a request from another site"), true
    if (path === "/logout") return req.resume(), redirect(res, "/login", { "set-cookie": this.auth.signOut(req) }), true
    // JSON only: a cross-site form or a simple fetch cannot send it without the browser asking first.
    if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) return this.refuse(req, res, 415, "send application/json"), true
    req.resume()
    const outcome = await runAction(this.sources.store, path)
    this.log.info({ path, outcome: outcome.body }, "owner console action")
    return sendJson(res, outcome.status, outcome.body), true
  }

  private async login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!sameOrigin(req, true)) return this.refuse(req, res, 403, "a sign-in from another site")
    const body = await readBody(req, LOGIN_BODY_MAX)
    if (body === undefined) return this.refuse(req, res, 413, "too large")
    const cookie = this.auth.signIn(new URLSearchParams(body).get("token") ?? "")
    if (cookie) return redirect(res, "/", { "set-cookie": cookie })
    this.log.warn({ from: req.socket.remoteAddress }, "owner console: a sign-in with a wrong token")
    send(res, 401, this.assets["login.html"].type, this.assets["login.html"].body.toString("utf8").replace(FAILED_MARK, FAILED_TEXT))
  }

  private file(req: IncomingMessage, res: ServerResponse, asset: Asset): void {
    req.resume()
    if (req.headers["if-none-match"] === asset.etag) return send(res, 304, asset.type, "", { etag: asset.etag, "cache-control": "no-cache" })
    send(res, 200, asset.type, asset.body, { etag: asset.etag, "cache-control": "no-cache" })
  }

  private refuse(req: IncomingMessage, res: ServerResponse, status: number, error: string): void {
    req.resume()
    sendJson(res, status, { error })
  }
}
