/** Longest file name most file systems take, in bytes; longer names are cut before the extension. */
const MAX_NAME_BYTES = 200

/**
 * A file name safe to create in any folder: no path (a name like `../../x` or `C:\x` keeps only
 * its last part), no control or reserved characters, no leading dots (hidden files), not empty,
 * and short enough.
 */
export function safeFileName(name: string): string {
  const last = name.split(/[/\\]/).pop() ?? ""
  let safe = last
    .normalize("NFC")
    .replace(/[\u0000-\u001f\u007f<>:"|?*]/g, "_")
    .replace(/^[.\s]+/, "")
    .trim()
  if (!safe) safe = "file"
  if (Buffer.byteLength(safe) <= MAX_NAME_BYTES) return safe
  const dot = safe.lastIndexOf(".")
  const ext = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : ""
  let stem = safe.slice(0, safe.length - ext.length)
  while (Buffer.byteLength(stem + ext) > MAX_NAME_BYTES) stem = stem.slice(0, -1)
  return stem + ext
}
