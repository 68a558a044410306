/**
 * Per-language word analysis. Each supported language is one entry of LANGUAGES: its stop
 * words, its Snowball stemmer and any extra terms a word should also be found by. A text's
 * language comes from tinyld, from the text's first DETECT_CHARS characters; a text it cannot
 * place, or places in a language without an entry, is analysed as DEFAULT_LANGUAGE. (eld
 * detects as well and a little faster, but its n-gram tables are 45 MB of small objects on
 * every thread's heap, and each full garbage collection then took over 100 ms.) Chinese and Japanese runs are segmented by script
 * in text.ts whatever the language.
 *
 * Adding a language is one entry, e.g. French:
 *   fr: { stopWords: new Set(frenchStopWords), stem: snowball(frenchStemmer), compounds: false },
 */
import { createRequire } from "node:module"
import { stemmer as germanStemmer } from "@orama/stemmers/german"
import { stopwords as germanStopWords } from "@orama/stopwords/german"
import porter2 from "wink-nlp-utils/src/string-stem.js"

export interface Language {
  /** Lower-cased NFKC words (accents kept) that carry no meaning alone. */
  stopWords: ReadonlySet<string>
  /** The terms of one lower-cased NFKC word (accents kept) that is not a stop word. */
  stem(word: string): string[]
  /** Long words are compounds of other words (query-time decompounding, see expand.ts). */
  compounds: boolean
}

const LATIN = /^[\p{sc=Latin}\p{M}\p{N}']+$/u

/** Accents off a Latin word: "zürich" → "zurich". Stemmers that know their accents run before this. */
export function fold(word: string): string {
  return /[^\x00-\x7f]/.test(word) && LATIN.test(word) ? word.normalize("NFD").replace(/\p{M}+/gu, "") : word
}

/** tinyld's language profiles take a third of a second to load: they are loaded when the first
 *  text is placed, not with the program (every start, and every command of the CLI, paid it). */
let tinyld: typeof import("tinyld") | undefined
const detector = (): typeof import("tinyld") => (tinyld ??= createRequire(import.meta.url)("tinyld") as typeof import("tinyld"))

const STEMMABLE = /^[a-z][a-z']*$/
/** wink's list, and the words that ask for the current state of something, which no note's topic is. */
const englishStopWords: ReadonlySet<string> = new Set([...(createRequire(import.meta.url)("wink-nlp-utils/src/dictionaries/stop_words.json") as string[]), "now", "currently", "current", "nowadays"])

/**
 * Past forms of common irregular verbs, which no suffix rule reaches: "paid" must find "pays",
 * "ran" "running". Forms that are also other words (left, found, saw, felt) are left out.
 */
const IRREGULAR: ReadonlyMap<string, string> = new Map(
  (
    "paid:pay bought:buy brought:bring ran:run met:meet went:go gone:go sold:sell told:tell thought:think taught:teach caught:catch " +
    "sent:send spent:spend built:build lent:lend made:make took:take taken:take gave:give given:give wrote:write written:write " +
    "drove:drive driven:drive ate:eat eaten:eat began:begin begun:begin broke:break broken:break chose:choose chosen:choose " +
    "forgot:forget forgotten:forget got:get gotten:get knew:know known:know rode:ride swam:swim swum:swim sang:sing sung:sing " +
    "spoke:speak spoken:speak stole:steal stolen:steal flew:fly flown:fly grew:grow grown:grow threw:throw thrown:throw " +
    "wore:wear worn:wear won:win kept:keep slept:sleep held:hold heard:hear did:do done:do had:have"
  )
    .split(" ")
    .map((pair) => pair.split(":") as [string, string]),
)

/** English as before languages were told apart (accents folded, then Porter2 from wink), plus
 *  an irregular past form's verb. */
function english(word: string): string[] {
  const folded = fold(word)
  if (!STEMMABLE.test(folded)) return [folded]
  const stem = porter2(folded)
  const verb = IRREGULAR.get(folded)
  return verb && porter2(verb) !== stem ? [stem, porter2(verb)] : [stem]
}

/** Separable verb prefixes that come before the ge- of a participle (ab-ge-holt). */
const SEPARABLE = /^(ab|an|auf|aus|bei|ein|fest|her|hin|los|mit|nach|vor|weg|zu|zuruck|zusammen)?ge(.{3,}?)(e?t|en)$/

/**
 * German Snowball stems, plus the stem of the word's verb base where the word is an inflected
 * verb form Snowball leaves whole: a participle (abgeholt → abhol, as Abholung and abholen) or
 * a -t form (tropft → tropf, besichtigt → besichtig). The extra term sits beside the Snowball
 * stem rather than replacing it, so a word that only looks like a participle (Gebiet) still
 * matches itself. Accents are folded first (Snowball's own umlaut handling ends in the same
 * letters), so "Schlussel" typed without umlauts, or a French "café", stem like the rest.
 */
function german(word: string): string[] {
  const plain = fold(word).replace(/ß/g, "ss")
  const stem = germanStemmer(plain)
  const participle = SEPARABLE.exec(plain)
  const base = participle ? `${participle[1] ?? ""}${participle[2]}` : plain.length >= 5 && plain.endsWith("t") ? plain.slice(0, -1) : undefined
  const verb = base === undefined ? undefined : germanStemmer(base)
  return verb && verb !== stem && verb.length >= 3 ? [stem, verb] : [stem]
}

/** Snowball's German list lacks some contractions and question words that queries are full of. */
const GERMAN_STOP_WORDS = new Set([...germanStopWords, "beim", "ans", "aufs", "wann", "wer", "warum", "wieso", "weshalb", "unsere", "unserer", "unseren", "bitte", "schon", "mal", "jetzt", "aktuell", "derzeit", "zurzeit"])

export const LANGUAGES = {
  en: { stopWords: englishStopWords, stem: english, compounds: false },
  de: { stopWords: GERMAN_STOP_WORDS, stem: german, compounds: true },
} satisfies Record<string, Language>

export type LanguageCode = keyof typeof LANGUAGES
export const DEFAULT_LANGUAGE: LanguageCode = "en"
export const LANGUAGE_CODES = Object.keys(LANGUAGES) as LanguageCode[]

/** Enough text to tell English from German; detection time grows with the text. */
const DETECT_CHARS = 200
const ALL_STOP_WORDS: ReadonlySet<string> = new Set(Object.values(LANGUAGES).flatMap((language) => [...language.stopWords]))

/**
 * The language to analyse `text` in. Plain ASCII text without a single stop word of any
 * supported language (codes, names, lists of nouns) gives a detector nothing to go on, and
 * costs it most (a millisecond, where a sentence takes a tenth): it is the default language
 * without asking.
 */
export function detectLanguage(text: string): LanguageCode {
  const head = text.length > DETECT_CHARS ? text.slice(0, DETECT_CHARS) : text
  if (/^[\x00-\x7f]*$/.test(head) && !head.toLowerCase().match(/[a-z']+/g)?.some((word) => ALL_STOP_WORDS.has(word))) return DEFAULT_LANGUAGE
  const code = detector().detect(head)
  return code in LANGUAGES ? (code as LanguageCode) : DEFAULT_LANGUAGE
}
