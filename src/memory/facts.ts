/**
 * What a note states a fact about, read without a model: the personal facts that change
 * (where we live, a phone number, a manager, a dentist…) as slots named by a small multilingual
 * lexicon, whose fact it is (the owner: the user, or a named person), and whether the note
 * announces a change ("new", "now", "moved", "seit", "jetzt", "新", "现在", "换"…). supersede.ts
 * links a note that announces a change to the older notes of the same slot and owner.
 *
 * The lexicon is a list of words, not of notes: English words match whole (with a plural -s),
 * German ones anywhere in a word (German compounds: Festnetznummer, Kinderärztin), Chinese
 * ones anywhere in the text. Phrases are matched first and take their words with them, so
 * "email address" is an email, not an address.
 */

const WHEN = "when"

/** Slot → its words, per script: English (whole words or phrases), German (parts of words), Chinese (substrings). */
const SLOTS: Record<string, { en: string; de: string; zh: string }> = {
  address: {
    en: "address|home address|live|lives|living|residence|we moved|i moved|moved to|moved into|moving to|moved house|new home|our place|my place",
    de: "adresse|anschrift|wohnort|wohnen|wohne|wohnt|umgezogen|umzug",
    zh: "地址|住址|住在|搬到|搬家",
  },
  phone: { en: "phone|phone number|telephone", de: "telefon|rufnummer", zh: "电话|号码|新号" },
  mobile: { en: "mobile|mobile number|mobile phone|cell|cellphone|cell phone", de: "handy|mobilnummer|mobilfunk", zh: "手机" },
  landline: { en: "landline|home phone", de: "festnetz|telefonanschluss", zh: "座机|固话" },
  email: { en: "email|e-mail|mail|email address|e-mail address|inbox", de: "e-mail|mailadresse", zh: "邮箱|邮件|电邮" },
  manager: { en: "manager|boss|supervisor|line manager|team lead|reports to", de: "vorgesetzt|chefin|teamleit", zh: "经理|领导|上司|老板|主管" },
  employer: { en: "job|employer|company|hired|works at|work at", de: "arbeitgeber|angestellt|firma|arbeitsstelle", zh: "工作|公司|上班" },
  role: { en: "role|position|job title|title", de: "position|berufsbezeichnung", zh: "职位|职务|头衔" },
  dentist: { en: "dentist|dental", de: "zahnarzt|zahnärzt", zh: "牙医|牙科" },
  doctor: { en: "doctor|family doctor|gp|physician", de: "hausarzt|hausärzt|arzt|ärztin", zh: "医生|家庭医生" },
  paediatrician: { en: "paediatrician|pediatrician", de: "kinderarzt|kinderärzt", zh: "儿科" },
  wifi: { en: "wifi|wi-fi|wlan|wireless|router|password|network", de: "wlan|passwort", zh: "无线|网络|密码|wifi" },
  internet: { en: "internet|broadband|dsl|internet contract", de: "internet|dsl|glasfaser", zh: "宽带" },
  gym: { en: "gym|fitness|train at", de: "fitnessstudio|fitness", zh: "健身" },
  car: { en: "car|vehicle|licence plate|license plate|registration", de: "kennzeichen|auto", zh: "车牌|汽车" },
  rent: { en: "rent|monthly rent", de: "miete", zh: "房租|租金" },
  salary: { en: "salary|paycheck|wage|wages|salary account|bank account|current account|iban", de: "gehalt|girokonto|iban", zh: "工资|薪水" },
  hairdresser: { en: "hairdresser|hair|haircut|barber|salon", de: "friseur|frisör", zh: "理发|发型" },
  restaurant: { en: "restaurant|favourite restaurant|favorite restaurant|eat out|place to eat", de: "restaurant|lieblingslokal", zh: "餐厅|饭店|馆子" },
  school: { en: "school|kindergarten|daycare|nursery|kita", de: "kita|kindergarten|schule", zh: "幼儿园|学校" },
  insurance: { en: "insurance|insurer", de: "versicherung", zh: "保险" },
  bank: { en: "bank", de: "bank", zh: "银行" },
  landlord: { en: "landlord|landlady|property manager", de: "vermieter|hausverwaltung", zh: "房东" },
  // A change used as a point in time ("since we moved, …"): it takes its words and names no slot.
  [WHEN]: { en: "since we moved|after we moved|since moving|after moving|before we moved", de: "seit dem umzug|nach dem umzug|vor dem umzug", zh: "搬家以后|搬家后" },
}

/** Slots that are kinds of a broader one: a note about the broader slot may be about any of them. */
export const BROADER: Record<string, string> = { mobile: "phone", landline: "phone" }

/** Words that say a note replaces what was true before. */
const UPDATE_EN = /\b(?:new|now|moved|switched|changed|no longer|anymore|instead|replaced|since|from now on|these days|started|sold|cancell?ed)\b/i
const UPDATE_DE = /\b(?:neu|neue|neuer|neues|neuen|jetzt|nun|seit|umgezogen|gewechselt|geändert|nicht mehr|stattdessen|ab sofort|gekündigt)\b/i
const UPDATE_ZH = /新|现在|搬|换|改成|改为|不再|以后/

/** "Anna's", "Mia’s", "Mias Kita" (German: a name + s before a noun), "for/für Mia", "Mia的" (not "在Corvel的", at Corvel). */
const OWNER = /(\p{Lu}\p{Ll}+)['’]s\b|\b(\p{Lu}\p{Ll}+)s\s+(?=\p{Lu}\p{Ll})|\b(?:for|für)\s+(\p{Lu}\p{Ll}+)\b|(?<!在)(\p{Lu}\p{Ll}+)的/gu
const NAME = /\p{Lu}\p{Ll}+/gu
/** The user: a fact with no named owner is the user's (or the household's). */
export const SELF = ""

export interface Fact {
  /** Slots in the order the note first names them: the first is what the note is about. */
  slots: string[]
  /** Whose fact: named possessors, or SELF. */
  owners: string[]
  /** Lower-cased capitalised words: people the note mentions. */
  mentions: Set<string>
  /** The note announces a change. */
  update: boolean
}

interface Matcher {
  phrase: RegExp
  slot: string
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const MATCHERS: Matcher[] = Object.entries(SLOTS)
  .flatMap(([slot, { en, de, zh }]) => [
    ...en.split("|").map((word) => ({ slot, word, phrase: new RegExp(`(?<![\\p{L}\\p{N}])${escape(word)}(?:e?s)?(?![\\p{L}\\p{N}])`, "giu") })),
    ...de.split("|").map((word) => ({ slot, word, phrase: new RegExp(escape(word), "giu") })),
    ...zh.split("|").map((word) => ({ slot, word, phrase: new RegExp(escape(word), "giu") })),
  ])
  // Longest first: a phrase claims its words before their shorter entries can.
  .sort((a, b) => b.word.length - a.word.length)
  .map(({ slot, phrase }) => ({ slot, phrase }))

/** The slots `text` names, first-named first. */
export function slotsOf(text: string): string[] {
  const taken = new Uint8Array(text.length)
  const found: Array<{ slot: string; at: number }> = []
  for (const { slot, phrase } of MATCHERS) {
    phrase.lastIndex = 0
    for (let match = phrase.exec(text); match; match = phrase.exec(text)) {
      const end = match.index + match[0].length
      if (taken.subarray(match.index, end).some((x) => x === 1)) continue
      taken.fill(1, match.index, end)
      found.push({ slot, at: match.index })
    }
  }
  const slots: string[] = []
  for (const { slot } of found.sort((a, b) => a.at - b.at)) {
    for (const named of [slot, BROADER[slot]]) if (named && named !== WHEN && !slots.includes(named)) slots.push(named)
  }
  return slots
}

/** True when `text` announces a change; cheap, so it runs before slotsOf on every chunk. */
export function announcesChange(text: string): boolean {
  return UPDATE_EN.test(text) || UPDATE_DE.test(text) || UPDATE_ZH.test(text)
}

/** What `text` states, or undefined when it names no slot. */
export function factOf(text: string): Fact | undefined {
  const slots = slotsOf(text)
  if (slots.length === 0) return undefined
  const owners = new Set<string>()
  for (const match of text.matchAll(OWNER)) owners.add((match[1] ?? match[2] ?? match[3] ?? match[4])!.toLowerCase())
  const mentions = new Set(Array.from(text.matchAll(NAME), (match) => match[0].toLowerCase()))
  const owned = owners.size > 0 ? [...owners] : [SELF]
  if (owners.size === 0) mentions.add(SELF)
  return { slots, owners: owned, mentions, update: announcesChange(text) }
}
