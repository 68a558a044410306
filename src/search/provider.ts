import type { SearchConfig } from "../config/config.ts"
import { brave } from "./brave.ts"
import type { SearchProvider } from "./result.ts"
import { searxng } from "./searxng.ts"
import { tavily } from "./tavily.ts"

// A search that has not answered in 15 s is not coming; the run's own abort cuts it shorter.
const TIMEOUT_MS = 15_000

/** The provider SEARCH_PROVIDER names, or none (then web_search is not offered). */
export function searchProvider(config: SearchConfig | undefined, timeoutMs = TIMEOUT_MS): SearchProvider | undefined {
  switch (config?.provider) {
    case undefined:
      return undefined
    case "searxng":
      return searxng(config.url, timeoutMs)
    case "brave":
      return brave(config.apiKey, config.apiUrl, timeoutMs)
    case "tavily":
      return tavily(config.apiKey, config.apiUrl, timeoutMs)
  }
}
