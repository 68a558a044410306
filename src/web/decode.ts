/** The charset a Content-Type names, if any. */
export function charsetOf(contentType: string): string | undefined {
  return /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]
}

/** Bytes as text in `charset`; an unknown label is read as UTF-8. */
export function decodeText(bytes: Uint8Array, charset: string | undefined): string {
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(charset ?? "utf-8")
  } catch {
    // Unknown charset labels are common enough on the web; UTF-8 is the best guess.
    decoder = new TextDecoder("utf-8")
  }
  return decoder.decode(bytes)
}
