/**
 * Converts fetched HTML to text off the main thread: decoding, flattening and html-to-text take
 * from milliseconds to a second or two on a large page, which on the main thread would stall
 * every conversation. One job at a time; the main thread keeps idle workers for the next page.
 */
import { convert } from "html-to-text"
import { parentPort } from "node:worker_threads"
import { decodeText } from "./decode.ts"
import { flattenHtml } from "./flatten-html.ts"

export interface HtmlJob {
  bytes: Uint8Array
  charset?: string
  /** Text beyond this many characters is not needed. */
  maxChars: number
}

export type HtmlResult = { text: string; cut: boolean } | { error: string }

// Some slack over maxChars: conversion adds line breaks and bullets but also drops whitespace.
const TEXT_SLACK = 1024

parentPort!.on("message", (job: HtmlJob) => {
  let result: HtmlResult
  try {
    const flattened = flattenHtml(decodeText(job.bytes, job.charset), job.maxChars + TEXT_SLACK)
    const text = convert(flattened.html, {
      wordwrap: false,
      selectors: [
        { selector: "img", format: "skip" },
        { selector: "a", options: { ignoreHref: true } },
      ],
    })
    result = { text, cut: flattened.cut }
  } catch (error) {
    result = { error: error instanceof Error ? error.message : String(error) }
  }
  parentPort!.postMessage(result)
})
