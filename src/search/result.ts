/** One web search hit, whatever the provider. */
export interface SearchResult {
  title: string
  url: string
  snippet: string
}

export interface SearchProvider {
  /** The provider's name, for messages ("brave"). */
  name: string
  search(query: string, limit: number, signal: AbortSignal): Promise<SearchResult[]>
}

/** Providers mark matches with <strong> and escape entities; a model reads plain text best. */
export function plain(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim()
}
