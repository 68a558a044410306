/** `text` with its percent-escapes decoded; undefined when they are malformed ("%", "%zz", bytes
 *  that are not UTF-8), which decodeURIComponent reports by throwing. */
export function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}
