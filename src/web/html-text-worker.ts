/**
 * Converts fetched HTML to text off the main thread: decoding, flattening and html-to-text take
 * from milliseconds to a second or two on a large page, which on the main thread would stall
 * every conversation. One job at a time; the main thread keeps idle workers for the next page.
 */
import { convert } from "html-to-text"
import { serve } from "../untrusted/serve.ts"
import { decodeText } from "./decode.ts"
import { flattenHtml } from "./flatten-html.ts"

export interface HtmlJob {
  bytes: Uint8Array
  charset?: string
  /** Text beyond this many characters is not needed. */
  maxChars: number
}

export type HtmlText = { text: string; cut: boolean }

// Some slack over maxChars: conversion adds line breaks and bullets but also drops whitespace.
const TEXT_SLACK = 1024

serve((job: HtmlJob): HtmlText => {
  const flattened = flattenHtml(decodeText(job.bytes, job.charset), job.maxChars + TEXT_SLACK)
  const text = convert(flattened.html, {
    wordwrap: false,
    selectors: [
      { selector: "img", format: "skip" },
      { selector: "a", options: { ignoreHref: true } },
    ],
  })
  return { text, cut: flattened.cut }
})
