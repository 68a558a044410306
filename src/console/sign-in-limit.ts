/** Wrong tokens one address may try in a window before its sign-ins are refused until the window ends. */
const WRONG_PER_WINDOW = 5
const WINDOW_MS = 60_000
/** Addresses remembered at once; past this the oldest window is forgotten, so a flood of
 *  addresses costs bounded memory (each of them still gets at most WRONG_PER_WINDOW tries). */
const ADDRESSES_KEPT = 1024

/**
 * Bounds guessing ADMIN_TOKEN: per client address, WRONG_PER_WINDOW wrong tokens (login form or
 * bearer) per minute, then 429 until the minute is over — for the right token too, so a locked-out
 * guesser learns nothing. Behind a reverse proxy every client shares the proxy's address: a guesser
 * there can keep the owner out for that minute, the price of not trusting forwarded headers.
 */
export class SignInLimit {
  private readonly windows = new Map<string, { from: number; wrong: number }>()

  constructor(
    private readonly wrongPerWindow = WRONG_PER_WINDOW,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** Seconds until `address` may try again, or 0 when it may now. */
  retryAfter(address: string, now = Date.now()): number {
    const window = this.current(address, now)
    return window && window.wrong >= this.wrongPerWindow ? Math.ceil((window.from + this.windowMs - now) / 1000) : 0
  }

  /** Counts a wrong token from `address`. */
  wrong(address: string, now = Date.now()): void {
    const window = this.current(address, now) ?? { from: now, wrong: 0 }
    window.wrong++
    // Re-inserted last: the Map's order is then oldest window first.
    this.windows.delete(address)
    this.windows.set(address, window)
    if (this.windows.size > ADDRESSES_KEPT) this.windows.delete(this.windows.keys().next().value!)
  }

  private current(address: string, now: number): { from: number; wrong: number } | undefined {
    const window = this.windows.get(address)
    if (window && now - window.from >= this.windowMs) {
      this.windows.delete(address)
      return undefined
    }
    return window
  }
}
