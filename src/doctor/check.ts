/** One line of `steward doctor`: what was checked, what was found, and how to fix a failure. */
export interface Check {
  name: string
  ok: boolean
  detail: string
  fix?: string
}

/** How long one network check may take before it counts as unreachable. */
export const CHECK_TIMEOUT_MS = 10_000

export const failed = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix })
export const passed = (name: string, detail: string): Check => ({ name, ok: true, detail })

export function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
}
