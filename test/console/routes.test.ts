import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pino from "pino"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { AdminServer } from "../../src/admin/server.ts"
import { Metrics } from "../../src/admin/metrics.ts"
import { ConsoleRoutes } from "../../src/console/routes.ts"
import { ControlInbox } from "../../src/control/control-inbox.ts"
import { Store } from "../../src/store/store.ts"
import { taskRecord } from "../support/records.ts"

const TOKEN = "a-console-token-of-some-length"
const log = pino({ level: "silent" })
const healthy = async () => ({ ok: true, store: { ok: true }, channels: {}, reasons: [] })

let dir: string
let store: Store
let server: AdminServer
let base: string
let inbox: ControlInbox | undefined

let reads = 0

async function serve(withConsole: boolean): Promise<void> {
  reads = 0
  const routes = withConsole
    ? new ConsoleRoutes(TOKEN, { store, channels: () => (reads++, [{ name: "telegram", health: { ok: false, reason: "could not reach the Telegram API", reconnects: 2 } }]), mcp: () => [{ name: "files", state: "up", tools: 3 }], ownerZone: () => "Asia/Tokyo" }, log)
    : undefined
  server = new AdminServer(healthy, new Metrics(), log, routes)
  base = `http://127.0.0.1:${await server.start(0, "127.0.0.1")}`
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "steward-console-routes-"))
  store = await Store.open(dir)
})
afterEach(async () => {
  inbox?.stop()
  inbox = undefined
  await server?.stop()
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const bearer = { authorization: `Bearer ${TOKEN}` }
const login = (token: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/login`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams({ token }).toString() })

async function signedIn(): Promise<string> {
  const response = await login(TOKEN, { origin: new URL(base).origin })
  return response.headers.get("set-cookie")!.split(";")[0]!
}

describe("the owner console's HTTP surface", () => {
  it("does not exist without ADMIN_TOKEN: / and every console path are 404, /healthz and /metrics answer as before", async () => {
    await serve(false)
    for (const path of ["/", "/login", "/console/state", "/console/console.js", "/console/tasks/01ABCDEF/cancel"]) expect((await fetch(`${base}${path}`)).status, path).toBe(404)
    expect((await login(TOKEN)).status).toBe(404)
    expect((await fetch(`${base}/console/schedules/01ABCDEF/pause`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: "{}" })).status).toBe(404)
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    expect((await fetch(`${base}/metrics`)).status).toBe(200)
  })

  it("takes the bearer token for every console request and refuses a missing or wrong one", async () => {
    await serve(true)
    const first = await fetch(`${base}/`, { redirect: "manual" })
    expect([first.status, first.headers.get("location")]).toEqual([303, "/login"])
    expect((await fetch(`${base}/console/state`)).status).toBe(401)
    expect((await fetch(`${base}/console/state`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401)
    expect((await fetch(`${base}/`, { headers: { authorization: "Bearer nope" } })).status).toBe(401)
    expect((await fetch(`${base}/`, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200)
    const state = await fetch(`${base}/console/state`, { headers: bearer })
    expect(state.status).toBe(200)
    expect(await state.json()).toMatchObject({ zone: "Asia/Tokyo", channels: [{ name: "telegram", health: "down", reason: "could not reach the Telegram API" }], mcp: [{ name: "files", state: "up", tools: 3 }] })
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
  })

  it("signs a browser in with the login form: an HttpOnly, SameSite=Strict cookie; a wrong token is 401; sign-out ends the session", async () => {
    await serve(true)
    const wrong = await login("not-the-token")
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get("set-cookie")).toBeNull()
    expect(await wrong.text()).toContain("not the console token")
    const right = await login(TOKEN, { origin: new URL(base).origin })
    expect(right.status).toBe(303)
    expect(right.headers.get("set-cookie")).toMatch(/^steward_console_\d+=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/)
    const cookie = right.headers.get("set-cookie")!.split(";")[0]!
    expect((await fetch(`${base}/console/state`, { headers: { cookie } })).status).toBe(200)
    const out = await fetch(`${base}/logout`, { method: "POST", redirect: "manual", headers: { cookie, origin: new URL(base).origin } })
    expect(out.status).toBe(303)
    expect((await fetch(`${base}/console/state`, { headers: { cookie } })).status).toBe(401)
    // Another site's page cannot sign the browser in (or out), and a huge body is refused.
    expect((await login(TOKEN, { origin: "http://evil.example" })).status).toBe(403)
    expect((await login(TOKEN, { "sec-fetch-site": "cross-site" })).status).toBe(403)
    expect((await login("x".repeat(10_000))).status).toBe(413)
  })

  it("refuses actions a browser sends for another site or in a simple content type", async () => {
    await serve(true)
    const cookie = await signedIn()
    const path = `${base}/console/schedules/01TRIGGER0000000000000000/pause`
    const post = (headers: Record<string, string>) => fetch(path, { method: "POST", headers: { cookie, ...headers }, body: "{}" })
    expect((await post({ origin: "http://evil.example", "content-type": "application/json" })).status).toBe(403)
    expect((await post({ origin: "null", "content-type": "application/json" })).status).toBe(403)
    expect((await post({ "content-type": "application/json" })).status).toBe(403)
    expect((await post({ origin: new URL(base).origin, "sec-fetch-site": "same-site", "content-type": "application/json" })).status).toBe(403)
    expect((await post({ origin: new URL(base).origin, "content-type": "text/plain" })).status).toBe(415)
    expect((await post({ origin: new URL(base).origin, "content-type": "application/x-www-form-urlencoded" })).status).toBe(415)
    expect((await fetch(path, { headers: { cookie } })).status).toBe(405)
    expect(await store.owner.pendingControls()).toEqual([])
  })

  it("runs an action through the owner controls and answers with what the server said; unknown or ended targets are refused before", async () => {
    await store.save({ tasks: [taskRecord("01TASKRUNNING0000000000000", { status: "running" }), taskRecord("01TASKDONE0000000000000000")] })
    const cancelled: string[] = []
    inbox = new ControlInbox(store, {
      pauseTrigger: async () => ({ error: "not used" }),
      removeTrigger: async () => ({ error: "not used" }),
      revokeUser: async () => ({ error: "not used" }),
      cancelTask: async (id) => (cancelled.push(id), { done: `task ${id} cancelled` }),
    }, log, 50)
    await inbox.start()
    await serve(true)
    const act = (path: string) => fetch(`${base}${path}`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: "{}" })
    const done = await act("/console/tasks/01TASKRUNNING0000000000000/cancel")
    expect([done.status, await done.json()]).toEqual([200, { result: "task 01TASKRUNNING0000000000000 cancelled" }])
    expect(cancelled).toEqual(["01TASKRUNNING0000000000000"])
    const ended = await act("/console/tasks/01TASKDONE0000000000000000/cancel")
    expect([ended.status, await ended.json()]).toEqual([409, { error: "task 01TASKDONE0000000000000000 has already ended (completed)" }])
    expect((await act("/console/tasks/01NOSUCHTASK00000000000000/cancel")).status).toBe(404)
    expect((await act("/console/schedules/01NOSUCHTRIGGER00000000000/pause")).status).toBe(404)
    expect((await act("/console/tasks/%3Cscript%3E/cancel")).status).toBe(404)
    expect((await act("/console/tasks/01TASKRUNNING0000000000000/pause")).status).toBe(404)
    expect(cancelled).toHaveLength(1)
  })

  it("puts the security headers on every console response and the token in none", async () => {
    await serve(true)
    const cookie = await signedIn()
    for (const path of ["/", "/login", "/console/state", "/console/console.js", "/console/console.css", "/favicon.svg"]) {
      const response = await fetch(`${base}${path}`, { headers: { cookie } })
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-security-policy"), path).toMatch(/script-src 'self';.*frame-ancestors 'none'/)
      expect(response.headers.get("x-frame-options"), path).toBe("DENY")
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(await response.text(), path).not.toContain(TOKEN)
    }
  })

  it("puts the security headers on the admin server's own answers too: /healthz, /metrics, a 404", async () => {
    await serve(true)
    for (const path of ["/healthz", "/metrics", "/no-such-page", "/console/nothing"]) {
      const response = await fetch(`${base}${path}`)
      expect(response.headers.get("content-security-policy"), path).toMatch(/script-src 'self';.*frame-ancestors 'none'/)
      expect(response.headers.get("x-frame-options"), path).toBe("DENY")
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff")
    }
  })

  it("bounds guessing the token: after 5 wrong ones from an address, sign-in by form or bearer answers 429 (the right token too); a session goes on", async () => {
    await serve(true)
    const cookie = await signedIn()
    for (let i = 0; i < 3; i++) expect((await login("wrong-token-wrong-token")).status).toBe(401)
    for (let i = 0; i < 2; i++) expect((await fetch(`${base}/console/state`, { headers: { authorization: "Bearer wrong-token-wrong" } })).status).toBe(401)
    const limited = await login(TOKEN, { origin: new URL(base).origin })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(limited.headers.get("set-cookie")).toBeNull()
    expect(await limited.text()).toContain("Too many wrong tokens")
    expect((await fetch(`${base}/console/state`, { headers: bearer })).status).toBe(429)
    expect((await fetch(`${base}/console/state`, { headers: { cookie } })).status).toBe(200)
  })

  it("signs in and acts behind a TLS proxy that sends its upstream as Host and the browser's name as X-Forwarded-Host", async () => {
    await serve(true)
    const proxied = { origin: "https://steward.example.com", "x-forwarded-host": "steward.example.com", "x-forwarded-proto": "https" }
    const response = await login(TOKEN, proxied)
    expect(response.status).toBe(303)
    const cookie = response.headers.get("set-cookie")!.split(";")[0]!
    const action = await fetch(`${base}/console/tasks/01NOSUCHTASK0000000000000/cancel`, { method: "POST", headers: { ...proxied, cookie, "content-type": "application/json" }, body: "{}" })
    expect(action.status).toBe(404)
    expect((await login(TOKEN, { ...proxied, origin: "https://evil.example" })).status).toBe(403)
  })

  it("marks the session cookie Secure when the browser came over https (behind a TLS proxy), not on plain http", async () => {
    await serve(true)
    expect((await login(TOKEN, { "x-forwarded-proto": "https" })).headers.get("set-cookie")).toMatch(/; Secure$/)
    expect((await login(TOKEN)).headers.get("set-cookie")).not.toMatch(/Secure/)
  })

  it("keeps the sessions of two Steward processes on one machine apart (a cluster, one admin port each)", async () => {
    await serve(true)
    const other = new AdminServer(healthy, new Metrics(), log, new ConsoleRoutes(TOKEN, { store, channels: () => [], mcp: () => [], ownerZone: () => "UTC" }, log))
    const otherBase = `http://127.0.0.1:${await other.start(0, "127.0.0.1")}`
    try {
      // One browser: its cookies are per host, not per port, so it sends both consoles every cookie it has.
      const jar = new Map<string, string>()
      for (const at of [base, otherBase]) {
        const response = await fetch(`${at}/login`, { method: "POST", redirect: "manual", headers: { origin: at, "content-type": "application/x-www-form-urlencoded" }, body: `token=${TOKEN}` })
        const [name, value] = response.headers.get("set-cookie")!.split(";")[0]!.split("=")
        jar.set(name!, value!)
      }
      const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ")
      for (const at of [base, otherBase]) expect((await fetch(`${at}/console/state`, { headers: { cookie } })).status, at).toBe(200)
    } finally {
      await other.stop()
    }
  })

  it("lets tabs polling at once share one read of the store, and reads afresh after an action", async () => {
    await store.save({ tasks: [taskRecord("01TASKDONE0000000000000000")] })
    await serve(true)
    const state = () => fetch(`${base}/console/state`, { headers: bearer }).then((response) => response.json())
    await Promise.all([state(), state(), state()])
    expect(reads).toBe(1)
    await fetch(`${base}/console/tasks/01TASKDONE0000000000000000/cancel`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: "{}" })
    await state()
    expect(reads).toBe(2)
  })
})
