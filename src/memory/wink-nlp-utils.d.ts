/**
 * The parts of wink-nlp-utils (CommonJS, untyped) that Steward uses. They are imported by
 * file: the package's main module loads a language model, which costs half a second per
 * thread, and the index worker starts often.
 */
declare module "wink-nlp-utils/src/string-stem.js" {
  /** Porter2 (English) stemmer. */
  function stem(word: string): string
  export = stem
}
