import type { ChannelHealth } from "../channel/channel.ts"
import type { McpServerHealth } from "../mcp/hub.ts"

export interface HealthReport {
  ok: boolean
  store: { ok: boolean; reason?: string }
  channels: Record<string, ChannelHealth>
  /** Why not ok, one line each, for the operator. */
  reasons: string[]
  /** Each MCP server: up, down or restarting, and its tool count. */
  mcp?: McpServerHealth[]
}

/** A write that takes longer than this counts as failed: the store is stuck (a lock, a full disk). */
const STORE_PROBE_TIMEOUT_MS = 2000

/** Healthy when a write to the store lands and every configured channel is connected. */
export async function checkHealth(probeStore: () => Promise<void>, channels: Array<{ name: string; health: ChannelHealth }>): Promise<HealthReport> {
  const store: HealthReport["store"] = await withTimeout(probeStore(), STORE_PROBE_TIMEOUT_MS).then(
    () => ({ ok: true }),
    (error: unknown) => ({ ok: false, reason: `the store is not writable: ${error instanceof Error ? error.message : String(error)}` }),
  )
  const reasons = store.reason ? [store.reason] : []
  for (const { name, health } of channels) if (!health.ok) reasons.push(`${name}: ${health.reason ?? "not connected"}`)
  return { ok: reasons.length === 0, store, channels: Object.fromEntries(channels.map(({ name, health }) => [name, health])), reasons }
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`a write took over ${ms / 1000} s`)), ms)))
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
