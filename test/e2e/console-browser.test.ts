import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FiringRecord, TriggerRecord } from "../../src/core/types.ts"
import { Store } from "../../src/store/store.ts"
import type { UsageSample } from "../../src/usage/usage.ts"
import { byRole, startModelServer, type ModelServer } from "../fakes/model-server.ts"
import { startTelegramApi, textUpdate, type TelegramApi } from "../fakes/telegram-api.ts"
import { launchChromium } from "../support/browser.ts"
import { scriptedEnv, telegramEnv, untilWhileRunning } from "../support/e2e.ts"
import { StewardProcess } from "../support/process.ts"
import { taskRecord } from "../support/records.ts"
import { afterTool, say } from "../support/scripts.ts"

/** Screenshots for a person to look at (git-ignored). */
const SHOTS = join(process.cwd(), "test-output", "console")
const TOKEN = "console-token-for-the-browser-test"
const OWNER = 1001
const XSS = `<img src=x onerror="document.body.dataset.pwned='yes'"><script>document.body.dataset.pwned='yes'</script>`
const DAY_MS = 86_400_000
/** A provider key Steward is configured with, which a task's error quotes. */
const API_KEY = "sk-console-browser-test-key-0123456789"

let dataDir: string
let models: ModelServer
let telegram: TelegramApi
let steward: StewardProcess
let browser: Browser
let base: string
let workerStarted = 0

const trigger = (id: string, extra: Partial<TriggerRecord>): TriggerRecord => ({
  id, conversation: "telegram:1001", user: "telegram:1001", kind: "recurring", prompt: "check the weather", cooldown: 0, timeout: null, onMissed: "skip", maxLateness: 60,
  status: "active", createdAt: new Date().toISOString(), origin: `test:${id}`, ...extra,
})

const firing = (triggerId: string, extra: Partial<FiringRecord>): FiringRecord => ({
  id: `${triggerId}/01FIRING000000000000000000`, triggerId, scheduledFor: new Date(Date.now() - 3600_000).toISOString(), at: new Date(Date.now() - 3600_000).toISOString(), outcome: "fired", status: "delivered", ...extra,
})

const usage = (daysAgo: number, user: string, model: string, input: number, output: number): UsageSample => ({
  at: new Date(Date.now() - daysAgo * DAY_MS).toISOString(), role: "teller", agent: "teller", conversation: user, user, sessionId: "s", model, input, cachedInput: 0, output,
})

/** What the running Steward holds before the browser looks: schedules with firings, a failed task
 *  whose error is an XSS payload, a week of model usage, the owner's time zone. */
async function seed(): Promise<void> {
  const store = await Store.open(dataDir)
  try {
    const nextRun = new Date(Date.now() + 2 * 3600_000).toISOString()
    await store.save({
      triggers: [
        trigger("01TRIGGERMORNING0000000000", { cron: "0 9 * * *", timezone: "Europe/Berlin", nextRunAt: nextRun, prompt: "morning briefing", lastFiringId: "01TRIGGERMORNING0000000000/01FIRING000000000000000000" }),
        trigger("01TRIGGERXSS00000000000000", { interval: 86_400, nextRunAt: nextRun, prompt: XSS, lastFiringId: "01TRIGGERXSS00000000000000/01FIRING000000000000000000" }),
      ],
      firings: [firing("01TRIGGERMORNING0000000000", { status: "delivered", messageId: "7" }), firing("01TRIGGERXSS00000000000000", { status: "failed", error: "the model was down" })],
      tasks: [
        taskRecord("01TASKFAILED00000000000000", { status: "failed", prompt: "summarise the inbox", error: XSS, startedAt: new Date(Date.now() - 120_000).toISOString(), endedAt: new Date(Date.now() - 60_000).toISOString() }),
        taskRecord("01TASKLEAKY000000000000000", { status: "failed", prompt: "call the API", error: `401 from https://api.example.com/v1?key=${API_KEY} (console ${TOKEN})`, startedAt: new Date(Date.now() - 100_000).toISOString(), endedAt: new Date(Date.now() - 90_000).toISOString() }),
      ],
      conversations: [{ id: "telegram:1001", user: "telegram:1001", tellerSessionId: "S" }],
      profiles: [{ user: "telegram:1001", timeZone: "Europe/Berlin", timeZoneSource: "user", updatedAt: new Date().toISOString() }],
    })
    for (let day = 0; day < 7; day++) {
      await store.owner.recordUsage(usage(day, "telegram:1001", "openai-compatible:scripted", 1000 + day * 300, 100 + day * 20))
      if (day % 2 === 0) await store.owner.recordUsage(usage(day, "slack:U2002", "anthropic:claude-small", 500, 50))
    }
    // A user id and a model name are written by others too (a platform, an owner's MODEL).
    await store.owner.recordUsage(usage(1, `slack:${XSS}`, `openai-compatible:${XSS}`, 10, 1))
  } finally {
    await store.close()
  }
}

/** The Teller delegates what the owner writes; the Worker's run hangs until it is cancelled. */
const hangingWork = byRole({
  teller: (req) => (afterTool(req) ? { text: "" } : req.lastUserText.startsWith("<task-results>") ? say("stopped") : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
  planner: (req) => (afterTool(req) ? { text: "dispatched" } : { toolCalls: [{ name: "delegate", args: { prompt: req.lastUserText } }] }),
  worker: () => {
    workerStarted++
    return { hang: true }
  },
})

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "steward-console-browser-"))
  mkdirSync(SHOTS, { recursive: true })
  await seed()
  browser = await launchChromium()
  models = await startModelServer(hangingWork)
  telegram = await startTelegramApi()
  steward = StewardProcess.start({ ...scriptedEnv(dataDir, models.url), ...telegramEnv(telegram), ALLOWED_USERS: `telegram:${OWNER}`, ADMIN_PORT: "0", ADMIN_TOKEN: TOKEN, OPENAI_COMPATIBLE_API_KEY: API_KEY, LOG_LEVEL: "info" })
  base = `http://127.0.0.1:${await steward.adminPort()}`
}, 60_000)

afterAll(async () => {
  if (steward?.child.exitCode === null) await steward.kill()
  await browser?.close()
  await models?.close()
  await telegram?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** The text of a panel's table body, as a person reads it. */
const panel = (page: Page, id: string) => page.locator(`#${id} tbody`).innerText()

describe("the owner console in a real browser (headless Chromium against the built Steward)", () => {
  let page: Page

  it("sends an unsigned browser to the login form, refuses a wrong token, and signs in with the right one", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
    page = await context.newPage()
    await page.goto(`${base}/`)
    expect(new URL(page.url()).pathname).toBe("/login")
    await page.fill("#token", "not-the-token-at-all")
    const refused = page.waitForResponse((response) => response.url().endsWith("/login") && response.request().method() === "POST")
    await page.click("button[type=submit]")
    expect((await refused).status()).toBe(401)
    await expect.poll(() => page.locator(".failed").innerText()).toContain("not the console token")
    await page.screenshot({ path: join(SHOTS, "login-refused.png") })

    await page.fill("#token", TOKEN)
    await Promise.all([page.waitForURL(`${base}/`), page.click("button[type=submit]")])
    await page.waitForSelector("body[data-state=live]", { timeout: 5000 })
    const cookie = (await context.cookies()).find((c) => c.name === `steward_console_${new URL(base).port}`)
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" })
  })

  it("loads under 300 KB, everything from Steward itself, and marks its first render", async () => {
    // A fresh browser context: nothing cached, the whole first load (page, script, style, icon, state).
    const context = await browser.newContext({ storageState: await page.context().storageState() })
    const fresh = await context.newPage()
    const responses: Array<{ url: string; bytes: number }> = []
    fresh.on("response", (response) => void response.body().then((body) => responses.push({ url: response.url(), bytes: body.length }), () => {}))
    await fresh.goto(`${base}/`)
    await fresh.waitForSelector("body[data-state=live]", { timeout: 5000 })
    // How long it took is a benchmark figure (console_render_ms, npm run bench), not a timed test.
    const renderMs = await fresh.evaluate(() => performance.getEntriesByName("console-rendered")[0]?.startTime)
    await context.close()
    expect(responses.every((response) => response.url.startsWith(`${base}/`))).toBe(true)
    expect(responses.map((response) => new URL(response.url).pathname).sort()).toEqual(["/", "/console/console.css", "/console/console.js", "/console/state", "/favicon.svg"])
    const bytes = responses.reduce((sum, response) => sum + response.bytes, 0)
    expect(bytes).toBeLessThan(300 * 1024)
    expect(renderMs).toBeGreaterThan(0)
    console.log(JSON.stringify({ firstLoadBytes: bytes, renderMs: Math.round(renderMs!) }))
  })

  it("serves the page with a strict Content-Security-Policy and no framing", async () => {
    const response = await page.goto(`${base}/`)
    const csp = response!.headers()["content-security-policy"]!
    const scripts = /script-src ([^;]*)/.exec(csp)![1]!
    expect(scripts).toBe("'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toMatch(/unsafe-inline|\*|https:|data:/)
    expect(response!.headers()["x-frame-options"]).toBe("DENY")
    await page.waitForSelector("body[data-state=live]")
  })

  it("shows every panel: channels, schedules in the owner's zone with their last firing, failures, usage chart and tables, MCP", async () => {
    expect(await panel(page, "channels")).toMatch(/telegram\s+connected/)
    const schedules = await panel(page, "schedules")
    expect(schedules).toMatch(/morning briefing/)
    expect(schedules).toMatch(/\d\d:\d\d Europe\/Berlin/)
    expect(schedules).toMatch(/delivered/)
    expect(schedules).toMatch(/failed .*the model was down/)
    expect(await page.locator("#schedules .zone").innerText()).toBe("Times in Europe/Berlin")
    expect(await panel(page, "failures")).toMatch(/01TASKFAILED00000000000000[\s\S]*failed[\s\S]*summarise the inbox/)
    expect(await page.locator("#usage svg rect").count()).toBeGreaterThanOrEqual(14 * 2)
    expect(await page.locator("#usage svg g[data-day]").count()).toBe(14)
    expect(await page.locator("#by-user tbody").innerText()).toMatch(/telegram:1001\s+\d+[\s\S]*slack:U2002\s+4\s/)
    expect(await page.locator("#by-model tbody").innerText()).toMatch(/openai-compatible:scripted[\s\S]*anthropic:claude-small/)
    expect(await panel(page, "mcp")).toContain("no MCP servers configured")
    expect(await panel(page, "running")).toContain("nothing running")
    await page.screenshot({ path: join(SHOTS, "dashboard.png"), fullPage: true })
  })

  it("shows what users and models wrote as text: an XSS payload in a prompt and an error stays text", async () => {
    expect(await panel(page, "failures")).toContain(XSS)
    expect(await panel(page, "schedules")).toContain(XSS)
    expect(await panel(page, "by-user")).toContain(`slack:${XSS}`)
    expect(await panel(page, "by-model")).toContain(`openai-compatible:${XSS}`)
    expect(await page.locator("main img, main script").count()).toBe(0)
    expect(await page.evaluate(() => document.body.dataset.pwned)).toBeUndefined()
    const html = await page.content()
    expect(html).not.toContain(TOKEN)
  })

  it("shows no configured secret a task's error quotes: the state is redacted as the log is", async () => {
    expect(await panel(page, "failures")).toMatch(/01TASKLEAKY000000000000000[\s\S]*key=\[redacted\] \(console \[redacted\]\)/)
    const state = await (await fetch(`${base}/console/state`, { headers: { authorization: `Bearer ${TOKEN}` } })).text()
    expect(state).toContain("01TASKLEAKY000000000000000")
    expect(state).not.toContain(API_KEY)
    expect(state).not.toContain(TOKEN)
    expect(state).not.toContain(telegram.token)
  })

  it("updates in place when a task starts, and Cancel stops it", async () => {
    const before = await page.evaluate(() => performance.timeOrigin)
    telegram.pushUpdate(textUpdate(OWNER, OWNER, "count the stars"))
    await untilWhileRunning(steward, "the worker's run", () => workerStarted >= 1)
    // The Worker's task (the Planner's, with the same prompt, ends once it has dispatched it).
    const row = page.locator("#running tbody tr", { hasText: "count the stars" }).filter({ hasText: "default" })
    await expect.poll(() => row.count(), { timeout: 5000 }).toBe(1)
    // No reload: the page that was loaded is the one that shows it.
    expect(await page.evaluate(() => performance.timeOrigin)).toBe(before)
    await page.screenshot({ path: join(SHOTS, "running-task.png"), fullPage: true })

    const id = await row.locator("td.id").first().innerText()
    await row.getByRole("button", { name: "Cancel" }).click()
    await expect.poll(() => page.locator("#notice").innerText(), { timeout: 15_000 }).toBe(`task ${id} cancelled`)
    await expect.poll(() => panel(page, "running"), { timeout: 5000 }).toContain("nothing running")
    const store = await Store.open(dataDir)
    try {
      expect((await store.task(id))?.status).toBe("cancelled")
    } finally {
      await store.close()
    }
  })

  it("pauses and resumes a schedule", async () => {
    const row = () => page.locator("#schedules tbody tr", { hasText: "morning briefing" })
    await row().getByRole("button", { name: "Pause" }).click()
    await expect.poll(() => row().innerText(), { timeout: 15_000 }).toMatch(/paused\s+Resume/)
    expect(await page.locator("#notice").innerText()).toBe("trigger 01TRIGGERMORNING0000000000 paused")
    await page.screenshot({ path: join(SHOTS, "schedule-paused.png"), fullPage: true })
    await row().getByRole("button", { name: "Resume" }).click()
    await expect.poll(() => row().innerText(), { timeout: 15_000 }).toMatch(/active\s+Pause/)
    const store = await Store.open(dataDir)
    try {
      expect((await store.schedules.trigger("01TRIGGERMORNING0000000000"))?.status).toBe("active")
    } finally {
      await store.close()
    }
  })

  it("reads nothing while the tab is hidden, and reads at once when it is shown again", async () => {
    const reads: number[] = []
    page.on("request", (request) => void (new URL(request.url()).pathname === "/console/state" && reads.push(Date.now())))
    const show = (hidden: boolean) =>
      page.evaluate((hidden) => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden })
        Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") })
        document.dispatchEvent(new Event("visibilitychange"))
      }, hidden)
    await show(true)
    // A read already on its way when the tab was hidden may still land; none starts after it.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const hiddenAt = reads.length
    await new Promise((resolve) => setTimeout(resolve, 4500))
    expect(reads.length).toBe(hiddenAt)
    const shownAt = Date.now()
    await show(false)
    await expect.poll(() => reads.filter((at) => at >= shownAt).length, { timeout: 1000 }).toBeGreaterThan(0)
    expect(await page.locator("#updated").innerText()).toMatch(/^updated \d\d?:\d\d:\d\d( [AP]M)? (UTC|GMT[+-]?\d*|[A-Z]{3,4})$/)
  })

  it("refuses an action another site's page starts, and signs out", async () => {
    const evil = await page.evaluate(async (url) => {
      // The same browser with the session cookie, a simple cross-site-shaped request: no JSON, a foreign Origin is not settable, so try text/plain.
      const response = await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })
      return response.status
    }, `${base}/console/schedules/01TRIGGERMORNING0000000000/pause`)
    expect(evil).toBe(415)
    const crossSite = await fetch(`${base}/console/schedules/01TRIGGERMORNING0000000000/pause`, {
      method: "POST",
      headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; "), origin: "http://evil.example", "content-type": "application/json" },
      body: "{}",
    })
    expect(crossSite.status).toBe(403)
    await Promise.all([page.waitForURL(`${base}/login`), page.getByRole("button", { name: "Sign out" }).click()])
    expect((await page.goto(`${base}/console/state`))!.status()).toBe(401)
  })
})
