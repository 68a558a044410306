import { existsSync } from "node:fs"
import { chromium, type Browser } from "playwright-core"

/** Debian's chromium package; CHROMIUM_PATH names another. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** Headless Chromium for the console's browser tests. Missing, the test fails and says what to
 *  install: a browser test that skips would pass without testing anything. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`)
  // --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] })
}
