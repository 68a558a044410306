import { parseBlocks, type Block } from "./blocks.ts"
import { parseInline, type Emphasis, type Inline } from "./inline.ts"

/** An element of the output dialect: what opens it and what closes it. `name` tells elements apart. */
export type Wrapper = { name: string; open: string; close: string }

/** A character of text (as written out), a whole link, or a wrapper's opening or closing; cuts fall only between atoms. */
export type Atom = { out: string; text: string; open?: Wrapper; close?: Wrapper }

export type LinkNode = Extract<Inline, { url: string }>
export type ItemBlock = Extract<Block, { kind: "item" }>
export type CodeBlock = Extract<Block, { kind: "code" }>

/** HTML and mrkdwn both escape exactly these three. */
export const ESCAPED: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" }

/**
 * Writes parsed Markdown as atoms of one output dialect. The walk is the same for every
 * dialect; a subclass says how a character, an emphasis, a quote, a list marker, a code block
 * and a link are written. No element is nested in itself: an element already open
 * contributes only its content (a heading's bold, a quote in a quote).
 */
export abstract class AtomWriter {
  readonly atoms: Atom[] = []
  /** The elements open now, outermost first. */
  private readonly open: Wrapper[] = []

  protected abstract readonly emphasis: Record<Emphasis, Wrapper>
  protected abstract readonly quote: Wrapper
  /** One character of text as the dialect writes it. */
  protected abstract char(char: string): string
  protected abstract item(block: ItemBlock): void
  protected abstract code(block: CodeBlock): void
  protected abstract link(node: LinkNode): void

  markdown(markdown: string): this {
    this.blocks(parseBlocks(markdown))
    return this
  }

  protected isOpen(name: string): boolean {
    return this.open.some((wrapper) => wrapper.name === name)
  }

  protected text(value: string): void {
    for (const char of value) this.atoms.push({ out: this.char(char), text: char })
  }

  protected wrap(wrapper: Wrapper, body: () => void): void {
    if (this.isOpen(wrapper.name)) return body()
    this.openElement(wrapper)
    body()
    this.closeElement()
  }

  /** Runs `body` with the open elements named in `names` (and any opened inside them) closed
   *  around it, then re-opens them: for a dialect where `body`'s element may not sit inside those. */
  protected outside(names: ReadonlySet<string>, body: () => void): void {
    const from = this.open.findIndex((wrapper) => names.has(wrapper.name))
    if (from < 0) return body()
    const reopen = this.open.slice(from)
    while (this.open.length > from) this.closeElement()
    body()
    for (const wrapper of reopen) this.openElement(wrapper)
  }

  /** An inline code span; a dialect may write it differently where code cannot go. */
  protected codeSpan(children: Inline[]): void {
    this.wrap(this.emphasis.code, () => this.inline(children))
  }

  protected inline(nodes: Inline[]): void {
    for (const node of nodes) {
      if (typeof node === "string") this.text(node)
      else if ("url" in node) this.link(node)
      else if (node.emphasis === "code") this.codeSpan(node.children)
      else this.wrap(this.emphasis[node.emphasis], () => this.inline(node.children))
    }
  }

  private openElement(wrapper: Wrapper): void {
    this.atoms.push({ out: wrapper.open, text: "", open: wrapper })
    this.open.push(wrapper)
  }

  /** Closes the innermost element; one that holds nothing is dropped instead (an empty tag). */
  private closeElement(): void {
    const wrapper = this.open.pop()!
    if (this.atoms.at(-1)?.open === wrapper) this.atoms.pop()
    else this.atoms.push({ out: wrapper.close, text: "", close: wrapper })
  }

  private blocks(blocks: Block[]): void {
    blocks.forEach((block, n) => {
      // A blank line in the source stays a blank line; adjacent blocks stay on adjacent lines.
      if (n > 0) this.text(block.gap ? "\n\n" : "\n")
      switch (block.kind) {
        case "paragraph":
          return this.inline(parseInline(block.text))
        case "heading":
          // Neither platform has headings: a bold line.
          return this.wrap(this.emphasis.bold, () => this.inline(parseInline(block.text)))
        case "item":
          this.item(block)
          return this.inline(parseInline(block.text))
        case "code":
          return this.code(block)
        case "quote":
          return this.wrap(this.quote, () => this.blocks(block.blocks))
      }
    })
  }
}
