/**
 * How a note states a fact, read from its structure rather than from words of change: a label
 * and its value ("Address: 5 Elm Rd", "牙医：刘医生"), a copula after the thing named ("my
 * manager is Raj", "die Miete beträgt …", "车牌号是…"), a value whose shape says what it is
 * (an e-mail address, a phone number), or a correction that names the value it replaces
 * ("actually 14, not 12", "nicht 4471102", "不是京A12345"). facts.ts uses these beside its
 * lexicon, so a fact restated without any word of change still replaces the older one.
 */

/** After a slot's words: at most one more word in lower case ("membership", "there"), then a colon or a copula; not a name ("teacher at Grundschule am Hafen is"). */
const COPULA = /^(?:[\s-]+\p{Ll}[\p{Ll}-]*)?\s*(?:[:：=]|(?:is|are|ist|sind|beträgt|betragen|lautet|heißt|heisst)\b|是|为|叫)/u

/** After a slot's words, a preposition and a value: "rent to 1,950", "gym at McFit", "password to Blue-Harbour-19". */
const TO_VALUE = /^\s+(?:to|at|in|is now|auf|bei|nach|zu|zur|zum)\s+(?:the\s+)?[\p{Lu}\p{N}]/u
/** An amount of money: a rent or salary stated by its value ("zahlen wir 1.040 Euro Miete"). */
const MONEY = /\d[\d.,]*\s*(?:€|euros?|eur|dollars?|pounds?|£|\$|元|块|chf)|[€£$]\s*\d/iu

/** True when the text after a slot's words (`rest`) gives it a value: "Address: …", "manager is now …". */
export function givesValue(rest: string): boolean {
  return COPULA.test(rest) || TO_VALUE.test(rest)
}

/** True when `text` states an amount of money. */
export const statesAmount = (text: string) => MONEY.test(text)

/** A value a change can be to: a number, an e-mail address, a name (a capital not starting a sentence), or Chinese text. */
const VALUE = /\d|@|[^.!?:\s]\s+\p{Lu}|\p{sc=Han}/u

/** True when a note that announces a change names what it changed to ("the new place is 9 Canal Street"), not only that something changed ("new card terms"). */
export const namesValue = (text: string) => VALUE.test(text)

const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+\.[\p{L}]{2,}/u
/** Digits grouped the way phone numbers are written (not a date): "+49 151 2345 6789", "555-0142", "13800138000". */
const PHONE = /(?<![\d-])(?:\+\d{1,3}[\s-]?)?\(?\d{2,5}\)?(?:[\s-]\d{2,5}){1,4}(?![\d-])|(?<!\d)1[3-9]\d{9}(?!\d)/u
const DATE = /\d{4}-\d{2}-\d{2}/
/** A school's name: "Oakwood Academy", "Hillside Primary School", "Goethe-Gymnasium", "育才小学". */
const SCHOOL = /\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?[\s-](?:Academy|School|Primary|College|Gymnasium|Grundschule|Gesamtschule|Realschule|Schule)\b|\p{sc=Han}{2}(?:小学|中学|幼儿园)/u
/** A street address: "22 Birch Lane", "Seeweg 2", "建国路88号". */
const STREET = /\b\d{1,4}[a-z]?\s+(?:\p{Lu}\p{Ll}+\s+){1,2}(?:Street|St|Road|Rd|Lane|Ln|Avenue|Ave|Court|Ct|Way|Drive|Dr|Close|Place|Pl|Square|Sq|Terrace|Crescent|Boulevard|Blvd)\b|\p{L}+(?:straße|strasse|str\.|weg|allee|gasse|platz|ring|damm|ufer)\s+\d{1,4}\b|[路街道巷]\d+号/u

/** The slot a value's shape names, for a note whose words name none ("Number: 555-0142"). */
/** Labels that only say what kind of value follows ("Home: 22 Birch Lane", "Number: 555-0142"). */
const GENERIC_LABEL: Record<string, RegExp> = {
  address: /^label:(?:home|house|flat|apartment|place|wohnung|zuhause|adresse|家|住址)$/u,
  phone: /^label:(?:number|no|tel|nummer|号码|电话)$/u,
  email: /^label:(?:mail|e-mail|contact|kontakt|邮箱)$/u,
}

/**
 * The kind of a note the lexicon names no kind in: its label ("Locker code: …", "My tax ID is
 * 12 345 678 901"), or the shape of its value when the label names none or only the value's
 * kind ("Home: 22 Birch Lane", "Number: 555-0142").
 */
export function slotOfUnnamed(text: string): string | undefined {
  const label = labelOf(text)
  const byValue = slotOfValue(text)
  return byValue && (!label || GENERIC_LABEL[byValue]?.test(label)) ? byValue : label
}

export function slotOfValue(text: string): string | undefined {
  if (EMAIL.test(text)) return "email"
  if (STREET.test(text)) return "address"
  if (SCHOOL.test(text)) return "school"
  const phone = PHONE.exec(text.replace(DATE, ""))
  if (phone && phone[0].replace(/\D/g, "").length >= 7) return "phone"
  return undefined
}

/**
 * A label the note states a value for when no slot of the lexicon is named ("Locker code is
 * 4471", "Vet for Biscuit: Dr. Ruiz", "Allergy: penicillin"): its words, lower-cased, without
 * articles, possessives or whose it is. Short labels only; a long one is a sentence.
 */
const LABEL = /^\s*(?:(?:my|our|the|mein|meine|unser|unsere|die|der|das)\s+)?([\p{L}'’ -]{2,32}?)\s*(?:[:：=]|\s(?:is|are|ist|sind|beträgt|lautet)\s)/iu
const LABEL_NOISE = /\b(?:for|für|von|of)\s+\p{L}+|\p{L}+['’]s\b|\b(?:my|our|the|new|current|mein|meine|unser|unsere|neue[rs]?|aktuelle[rs]?)\b/giu
const ZH_LABEL = /^([\p{sc=Han}A-Za-z]{1,8}?)(?:是|：|:)/u

/** "… my favourite coffee order is …": a possessive label anywhere in the note. */
const OWN_LABEL = /\b(?:my|our|mein|meine|unser|unsere)\s+([\p{L}'’ -]{2,32}?)\s+(?:is|are|ist|sind|beträgt|lautet)\s/iu

export function labelOf(text: string): string | undefined {
  const label = LABEL.exec(text)?.[1] ?? ZH_LABEL.exec(text.trim())?.[1] ?? OWN_LABEL.exec(text)?.[1]
  if (!label) return undefined
  const words = label.replace(LABEL_NOISE, " ").toLowerCase().split(/[\s-]+/).filter(Boolean)
  if (words.length === 0 || words.length > 3 || words.some((word) => /^(?:i|we|it|this|that|there|he|she|they|ich|wir|es|我|我们|这|那|他|她)$/.test(word))) return undefined
  return `label:${words.map((word) => word.replace(/(?<=\p{L}{3})s$/u, "")).join(" ")}`
}

/** "not 12", "nicht 4471102", "instead of", "不是京A12345": the value a correction replaces. */
const CORRECTED = /\b(?:not|nicht|statt|instead of|rather than)\s+([\p{L}\p{N}][\p{L}\p{N}.,@+-]*[\p{L}\p{N}])|(?:不是|而不是)\s*([\p{L}\p{N}][\p{L}\p{N}.@+-]*[\p{L}\p{N}])/gu
/** The note says it corrects something: only then does "not X" name a replaced value. */
const CORRECTING = /\b(?:actually|correction|correct is|i had it|wrong|korrektur|richtig ist|eigentlich|doch|falsch)\b|更正|纠正|其实|写错/iu

/** The values a correction note replaces, or none when the note corrects nothing. */
export function correctedValues(text: string): string[] {
  if (!CORRECTING.test(text)) return []
  return Array.from(text.matchAll(CORRECTED), (match) => (match[1] ?? match[2])!.toLowerCase())
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const WORDS = /(?:(?!\p{sc=Han})[\p{L}\p{N}]){3,}|\p{sc=Han}{2}/gu

/**
 * True when `correction` corrects `older`: the older note holds a value the correction names
 * as wrong ("not 12"), and the two share another word (flat, Kundennummer, 车牌), so a note
 * that holds the same number by chance is left alone.
 */
export function corrects(correction: { text: string; corrects: readonly string[] }, older: string): boolean {
  const values = correction.corrects.filter((value) => new RegExp(`(?<![\\p{sc=Latin}\\p{N}])${escape(value)}(?![\\p{sc=Latin}\\p{N}])`, "iu").test(older))
  if (values.length === 0) return false
  const wordsOf = (text: string) => new Set(Array.from(text.toLowerCase().matchAll(WORDS), (match) => match[0]).filter((word) => !values.some((value) => value.includes(word))))
  const theirs = wordsOf(older)
  return [...wordsOf(correction.text)].some((word) => theirs.has(word))
}
