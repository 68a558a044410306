import { Tokenizer } from "htmlparser2"

/**
 * Deeper than this, elements are dropped and only their text is kept. html-to-text walks the
 * document recursively and, on a page nested thousands deep, spent over half a minute before
 * overflowing the stack; real pages stay well under this.
 */
export const MAX_DEPTH = 48

/** Elements whose content is never text a reader sees. */
const SKIPPED = new Set(["script", "style", "noscript", "template", "svg", "math", "iframe", "object"])
/** Elements without a closing tag: `</br>` would read as a second `<br>`. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"])
/** The only attributes the conversion uses (table layout, list numbering). */
const KEPT_ATTRIBUTES = new Set(["colspan", "rowspan", "start", "type"])

/** How far down the open elements a closing tag looks for its element; a stray one is ignored. */
const CLOSE_SEARCH = 64

export interface Flattened {
  html: string
  /** The page had more text than `maxTextChars`; the rest was left out. */
  cut: boolean
}

interface Open {
  name: string
  /** false beyond MAX_DEPTH or inside a skipped element. */
  written: boolean
  skipped: boolean
}

/**
 * Rewrites `html` so that converting it to text is cheap whatever the page looks like: one
 * linear pass of htmlparser2's tokenizer that keeps at most MAX_DEPTH levels of elements, leaves
 * out scripts, styles, comments and unused attributes, and stops once about `maxTextChars`
 * characters of text have been kept — no more can be returned anyway. The tokenizer, not
 * htmlparser2's Parser: the Parser keeps its open elements with Array.unshift, quadratic in depth
 * (nearly a minute on a 2 MiB page of nested divs).
 */
export function flattenHtml(html: string, maxTextChars: number): Flattened {
  const out: string[] = []
  const open: Open[] = []
  let skipping = 0
  let kept = 0
  let cut = false
  let tag = ""
  let attributes = ""
  let attribute = ""
  let value = ""

  const close = (element: Open) => {
    if (element.skipped) skipping--
    if (element.written) out.push(`</${element.name}>`)
  }
  const start = (name: string) => {
    const skipped = SKIPPED.has(name)
    const written = skipping === 0 && !skipped && open.length < MAX_DEPTH
    if (written) out.push(`<${name}${attributes}>`)
    // A void element has no content and no closing tag, so it is never open.
    if (VOID.has(name)) return
    if (skipped) skipping++
    open.push({ name, written, skipped })
  }
  const end = (name: string) => {
    const from = Math.max(0, open.length - CLOSE_SEARCH)
    for (let at = open.length - 1; at >= from; at--) {
      if (open[at]!.name !== name) continue
      // Elements left open inside it end with it, as in a browser.
      while (open.length > at) close(open.pop()!)
      return
    }
  }
  const text = (chunk: string) => {
    if (skipping > 0 || cut) return
    out.push(escapeText(chunk))
    kept += chunk.replace(/\s+/g, " ").length
    if (kept > maxTextChars) {
      cut = true
      tokenizer.pause()
    }
  }
  const slice = (from: number, to: number) => html.slice(from, to)

  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onopentagname(from, to) {
        tag = slice(from, to).toLowerCase()
        attributes = ""
      },
      onattribname(from, to) {
        attribute = slice(from, to).toLowerCase()
        value = ""
      },
      onattribdata(from, to) {
        value += slice(from, to)
      },
      onattribentity(codepoint) {
        value += String.fromCodePoint(codepoint)
      },
      onattribend() {
        if (KEPT_ATTRIBUTES.has(attribute)) attributes += ` ${attribute}="${escapeText(value).replaceAll('"', "&quot;")}"`
      },
      onopentagend() {
        start(tag)
      },
      // `<div/>` opens a div in HTML; only void elements close themselves.
      onselfclosingtag() {
        start(tag)
      },
      onclosetag(from, to) {
        end(slice(from, to).toLowerCase())
      },
      ontext(from, to) {
        text(slice(from, to))
      },
      ontextentity(codepoint) {
        text(String.fromCodePoint(codepoint))
      },
      oncdata() {},
      oncomment() {},
      ondeclaration() {},
      onprocessinginstruction() {},
      onend() {},
    },
  )
  tokenizer.write(html)
  if (!cut) tokenizer.end()
  // Elements still open at the end are closed, so the result is well formed.
  while (open.length > 0) close(open.pop()!)
  return { html: out.join(""), cut }
}

function escapeText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
}
