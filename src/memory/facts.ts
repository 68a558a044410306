/**
 * What a note states a fact about, read without a model: the personal facts that change
 * (where we live, a phone number, a manager, a dentist…) as slots named by a small multilingual
 * lexicon (or, for a kind it lacks, by the note's label or its value's shape: statement.ts),
 * whose fact it is (owners.ts), which slots the note gives a value (a label, a copula, a verb of
 * stating: read from the sentence, not from words of change), whether it announces a change
 * ("now", "moved", "jetzt", "现在", "换"…, or "new" before the thing) and what a correction calls
 * wrong. supersede.ts links a newer note that states or changes a slot to the older notes of
 * the same slot and owner.
 *
 * The lexicon is a list of words, not of notes: most entries match whole words (with a plural
 * -s), German compound parts anywhere in a word (Festnetznummer, Kinderärztin), Chinese ones
 * anywhere in the text. One pass over the text, the longest entry first at each place, so
 * "email address" is an email, not an address.
 */

import { ownersOf, SELF } from "./owners.ts"
import { correctedValues, givesValue, namesValue, slotOfUnnamed, slotOfValue, statesAmount } from "./statement.ts"

export { SELF }

const WHEN = "when"

/**
 * Slot → its entries: `words`, whole words or phrases in any language (a plural -s or -es
 * allowed); `parts`, found inside words (German compounds: Festnetznummer, Kinderärztin);
 * `zh`, found anywhere (Chinese has no spaces).
 */
const SLOTS: Record<string, { words: string; parts?: string; zh?: string }> = {
  address: {
    words: "address|home address|live|lives|living|residence|we moved|i moved|moved to|moved into|moving to|moved house|new home|our place|my place|wohne|wohnen|wohnt|umgezogen",
    parts: "adresse|anschrift|wohnort|umzug",
    zh: "地址|住址|住在|搬到|搬家",
  },
  phone: { words: "phone|phone number|telephone|new number|neue nummer", parts: "telefon|rufnummer", zh: "电话|号码|新号" },
  mobile: { words: "mobile|mobile number|mobile phone|cell|cellphone|cell phone|handy", parts: "handynummer|mobilnummer|mobilfunk", zh: "手机" },
  landline: { words: "landline|home phone", parts: "festnetz|telefonanschluss", zh: "座机|固话" },
  email: { words: "email|e-mail|mail|email address|e-mail address|inbox", parts: "mailadresse", zh: "邮箱|邮件|电邮" },
  manager: { words: "manager|boss|supervisor|line manager|team lead|reports to|chef|chefin", parts: "vorgesetzt|teamleit", zh: "经理|领导|上司|老板|主管" },
  employer: { words: "job|employer|company|hired|works at|work at|started at|work for|works for|firma|angestellt|arbeite bei|arbeitet bei|angefangen bei", parts: "arbeitgeber|arbeitsstelle", zh: "工作|公司|上班|入职" },
  role: { words: "role|position|job title|title|promoted|promotion", parts: "berufsbezeichnung|befördert", zh: "职位|职务|头衔|升职" },
  dentist: { words: "dentist|dental", parts: "zahnarzt|zahnärzt", zh: "牙医|牙科" },
  doctor: { words: "doctor|family doctor|gp|physician|arzt|ärztin", parts: "hausarzt|hausärzt", zh: "医生|家庭医生" },
  paediatrician: { words: "paediatrician|pediatrician", parts: "kinderarzt|kinderärzt", zh: "儿科" },
  wifi: { words: "wifi|wi-fi|wlan|wireless|router|password|network|passwort", parts: "wlan", zh: "无线|网络|密码" },
  internet: { words: "internet|broadband|dsl|internet contract", parts: "internet|glasfaser", zh: "宽带" },
  gym: { words: "gym|fitness|train at|trainiere bei", parts: "fitnessstudio", zh: "健身" },
  car: { words: "car|vehicle|licence plate|license plate|registration|auto", parts: "kennzeichen", zh: "车牌|汽车" },
  rent: { words: "rent|monthly rent|miete", parts: "kaltmiete|warmmiete", zh: "房租|租金" },
  salary: { words: "salary|paycheck|wage|wages|salary account|gehalt", zh: "工资|薪水" },
  hairdresser: { words: "hairdresser|hair|haircut|barber|salon", parts: "friseur|frisör", zh: "理发|发型" },
  restaurant: { words: "restaurant|favourite restaurant|favorite restaurant|eat out|place to eat", parts: "lieblingslokal|restaurant", zh: "餐厅|饭店|馆子" },
  school: { words: "school|kindergarten|daycare|nursery|kita", parts: "kita|kindergarten|schule", zh: "幼儿园|学校|小学|中学|上学|转学" },
  team: { words: "team|department", parts: "abteilung", zh: "团队|部门" },
  insurance: { words: "insurance|insurer", parts: "versicherung", zh: "保险" },
  bank: { words: "bank|bank account|current account|iban", parts: "girokonto|bankkonto", zh: "银行" },
  partner: { words: "partner|girlfriend|boyfriend|fiancé|fiancée|fiance|fiancee|partnerin|freundin|freund|lebensgefährte|lebensgefährtin", zh: "女朋友|男朋友|对象|未婚妻|未婚夫" },
  landlord: { words: "landlord|landlady|property manager", parts: "vermieter|hausverwaltung", zh: "房东" },
  // A change used as a point in time ("since we moved, …"): it takes its words and names no slot.
  [WHEN]: { words: "since we moved|after we moved|since moving|after moving|before we moved|seit dem umzug|nach dem umzug|vor dem umzug", zh: "搬家以后|搬家后" },
}

/** Slots that are kinds of a broader one: a note about the broader slot may be about any of them. */
export const BROADER: Record<string, string> = { mobile: "phone", landline: "phone" }

/** "new" says a change only of what follows it in its sentence: "the new apartment: network …" is a new network, "Auto in der Werkstatt, neue Bremsen" no new car. */
const NEW_WORD = /\bnew\b|\bneu(?:e[nrs]?)?\b|新/iu

/** Words that say a note replaces what was true before. */
const UPDATE_EN = /\b(?:now|moved|switched|changed|no longer|anymore|instead|replaced|since|from now on|these days|started|sold|cancell?ed)\b/i
const UPDATE_DE = /\b(?:jetzt|nun|seit|umgezogen|gewechselt|geändert|nicht mehr|stattdessen|ab sofort|gekündigt)\b/i
const UPDATE_ZH = /现在|搬|换|改成|改为|涨|转学|转到|不再|以后/

/**
 * Words before a slot that make it a different thing of the same kind: a work phone is not the
 * mobile, a guest wifi not the home wifi. Such a slot is filed as `<slot>@<qualifier>`.
 */
const QUALIFIERS: Record<string, string> = Object.fromEntries(
  [
    ["work", "work|office|business|company|dienstlich|dienstliche|dienstlicher|geschäftlich|geschäftliche|büro|arbeit|firmen|工作|办公|单位|公司"],
    ["second", "second|spare|backup|old|zweite|zweiter|zweites|alte|alter|备用"],
    ["guest", "guest|gäste|访客"],
  ].flatMap(([group, words]) => words!.split("|").map((word) => [word, group!])),
)
const QUALIFIER_BEFORE = /([\p{L}]+)[\s-]*$|([\p{sc=Han}]{2})$/u

export interface Fact {
  /** Slots in the order the note first names them: the first is what the note is about. */
  slots: string[]
  /** Whose fact: named possessors or subjects, or SELF. */
  owners: string[]
  /** Lower-cased capitalised words: people the note mentions. */
  mentions: Set<string>
  /** The note announces a change and names what it changed to ("the new place is 9 Canal Street", not "new card terms"). */
  update: boolean
  /** Slots the note gives a value ("Address: …", "my manager is …", "the rent to 1,950"), with or without a word of change. */
  stated: string[]
  /** Values a correction replaces ("not 12"), lower-cased. */
  corrects: string[]
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Lower-cased word or phrase → its slot. */
const SLOT_OF = new Map<string, string>()
const WHOLE: string[] = []
const INSIDE: string[] = []
for (const [slot, { words, parts = "", zh = "" }] of Object.entries(SLOTS)) {
  WHOLE.push(...words.split("|"))
  INSIDE.push(...[...parts.split("|"), ...zh.split("|")].filter(Boolean))
  for (const word of [...words.split("|"), ...parts.split("|"), ...zh.split("|")].filter(Boolean)) SLOT_OF.set(word, slot)
}
const longestFirst = (list: string[]) => [...list].sort((a, b) => b.length - a.length).map(escape).join("|")
/**
 * One pass over a text: at each place the longest whole word or phrase that matches there
 * (a plural -s or -es allowed), else the longest part. One boundary check for all the words:
 * a check per word made this regex most of the cost of indexing a note.
 */
const LEXICON = new RegExp(`(?<![\\p{L}\\p{N}])(?:${longestFirst(WHOLE)})(?:e?s)?(?![\\p{L}\\p{N}])|${longestFirst(INSIDE)}`, "giu")

/** The slots `text` names, first-named first; a narrower slot brings its broader one. */
export function slotsOf(text: string): string[] {
  return namedSlots(text).map(({ slot }) => slot)
}

/** Each slot with whether the text gives it a value right after naming it. */
function namedSlots(text: string): Array<{ slot: string; word: string; valued: boolean; renewed: boolean }> {
  const slots: Array<{ slot: string; word: string; valued: boolean; renewed: boolean }> = []
  let where: { slot: string; sentence: number } | undefined
  for (const match of text.matchAll(LEXICON)) {
    const found = match[0].toLowerCase()
    const slot = SLOT_OF.get(found) ?? SLOT_OF.get(found.replace(/e?s$/, "")) ?? SLOT_OF.get(found.replace(/s$/, ""))
    if (!slot || slot === WHEN) continue
    const sentence = sentenceAt(text, match.index)
    // "Moved to the Platform team": the team moved, not the home.
    const moved = where && where.sentence === sentence && !WHERE_VERB.test(found) ? slots.findIndex((known) => known.slot === where!.slot) : -1
    if (moved >= 0) slots.splice(moved, 1)
    where = WHERE_VERB.test(found) && !slots.some((known) => known.slot === slot) ? { slot, sentence } : undefined
    const before = QUALIFIER_BEFORE.exec(text.slice(0, match.index))
    const qualifier = QUALIFIERS[(before?.[1] ?? before?.[2] ?? "").toLowerCase()]
    const valued = STATING.test(found) || givesValue(text.slice(match.index + match[0].length)) || (MONEY_SLOTS.has(slot) && statesAmount(text))
    const named = qualifier ? [`${slot}@${qualifier}`] : [slot, BROADER[slot]]
    const renewed = NEW_WORD.test(text.slice(Math.max(0, match.index - 40), match.index).split(/[.!?。！？;；]/u).pop()!)
    for (const one of named) {
      if (!one) continue
      const known = slots.find((slot) => slot.slot === one)
      // "WLAN-Passwort: …" names wifi twice; the value follows the second.
      if (known) Object.assign(known, { valued: known.valued || valued, renewed: known.renewed || renewed })
      else slots.push({ slot: one, word: found, valued, renewed })
    }
  }
  return slots
}

/** Sentences before `index`: a slot's place, to tell which slots one sentence names. */
const sentenceAt = (text: string, index: number) => (text.slice(0, index).match(/[.!?。！？;；]/gu) ?? []).length
/** Slots a note states by an amount alone ("zahlen wir 1.040 Euro Miete"). */
const MONEY_SLOTS = new Set(["rent", "salary"])

/** True when `text` says something changed (a new thing it names is found by namedSlots). */
export function announcesChange(text: string): boolean {
  return UPDATE_EN.test(text) || UPDATE_DE.test(text) || UPDATE_ZH.test(text)
}

/** Slot words that are verbs of stating: "I live …", "wohnen in …", "works at …", "住在…". */
const STATING = /^(?:live|lives|living|wohne|wohnen|wohnt|moved to|moved into|moving to|works at|work at|work for|works for|started at|arbeite bei|arbeitet bei|angefangen bei|train at|trainiere bei|reports to|promoted|befördert|住在|搬到|上班|上学|入职|升职)$/u
/** Verbs of stating that only say where (moved to, 住在): a slot named after them in the same sentence is what moved ("moved to the Platform team"). */
const WHERE_VERB = /^(?:moved to|moved into|moving to|搬到)$/u

/** True when `word` names a slot ("Rent", "Dentist", "Kinderärztin"). */
const namesSlot = (word: string) => namedSlots(word).length > 0

/** The slot of a note that names no kind but corrects a value ("Actually it's 14, not 12"). */
export const CORRECTION = "correction"

/**
 * What `text` states, or undefined when it names no slot. Without a slot of the lexicon, the
 * shape of its value (an e-mail address, a phone number) or its label ("Locker code: …")
 * names one.
 */
export function factOf(text: string): Fact | undefined {
  if (READ.has(text)) return READ.get(text)
  const fact = readFact(text)
  // Searches read the facts of the same candidates again and again; a bounded memory of the last ones read.
  if (READ.size >= READ_MAX) READ.delete(READ.keys().next().value!)
  READ.set(text, fact)
  return fact
}

const READ = new Map<string, Fact | undefined>()
const READ_MAX = 4096

function readFact(text: string): Fact | undefined {
  const named = namedSlots(text)
  const byValue = slotOfValue(text)
  // "Leo started at Oakwood Academy": a verb that only says where leaves the kind to the value.
  if (byValue && named.length > 0 && STATING.test(named[0]!.word) && !named.some(({ slot }) => slot === byValue)) named.unshift({ slot: byValue, word: "", valued: true, renewed: false })
  const fallback = named.length === 0 ? slotOfUnnamed(text) : undefined
  const corrects = correctedValues(text)
  if (named.length === 0 && !fallback && corrects.length === 0) return undefined
  const slots = fallback ? [fallback] : named.length > 0 ? named.map(({ slot }) => slot) : [CORRECTION]
  // A slot found by its value or label is stated by the note; a slot of the lexicon when the note gives it a value.
  const stated = fallback ? [fallback] : named.filter(({ valued }) => valued).map(({ slot }) => slot)
  return { slots, ...ownersOf(text, namesSlot), update: (announcesChange(text) || named.some(({ renewed }) => renewed)) && namesValue(text), stated, corrects }
}
