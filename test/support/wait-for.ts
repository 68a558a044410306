/** Resolves with the predicate's first truthy value, checked every few ms; rejects once `timeoutMs` has passed or the predicate throws. */
export function waitFor<T>(predicate: () => T, timeoutMs = 5000): Promise<NonNullable<T>> {
  return new Promise<NonNullable<T>>((resolve, reject) => {
    const deadline = Date.now() + timeoutMs
    const check = () => {
      try {
        const value = predicate()
        if (value) resolve(value as NonNullable<T>)
        else if (Date.now() < deadline) return
        else reject(new Error(`waitFor: condition not met within ${timeoutMs} ms`))
      } catch (error) {
        reject(error)
      }
      clearInterval(timer)
    }
    const timer = setInterval(check, 5)
    check()
  })
}

/** Polls `check` (which may be async) every 20 ms until it holds; rejects after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`eventually: ${what} did not happen within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
