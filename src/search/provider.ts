import type { SearchConfig } from "../config/config.ts"
import { brave } from "./brave.ts"
import type { SearchProvider } from "./result.ts"
import { searxng } from "./searxng.ts"
import { tavily } from "./tavily.ts"

/** The provider SEARCH_PROVIDER names, or none (then web_search is not offered). */
export function searchProvider(config: SearchConfig | undefined): SearchProvider | undefined {
  switch (config?.provider) {
    case undefined:
      return undefined
    case "searxng":
      return searxng(config.url)
    case "brave":
      return brave(config.apiKey, config.apiUrl)
    case "tavily":
      return tavily(config.apiKey, config.apiUrl)
  }
}
