/**
 * What a note states a fact about, read without a model: the personal facts that change
 * (where we live, a phone number, a manager, a dentist…) as slots named by a small multilingual
 * lexicon, whose fact it is (the owner: the user, or a named person), and whether the note
 * announces a change ("new", "now", "moved", "seit", "jetzt", "新", "现在", "换"…). supersede.ts
 * links a note that announces a change to the older notes of the same slot and owner.
 *
 * The lexicon is a list of words, not of notes: most entries match whole words (with a plural
 * -s), German compound parts anywhere in a word (Festnetznummer, Kinderärztin), Chinese ones
 * anywhere in the text. One pass over the text, the longest entry first at each place, so
 * "email address" is an email, not an address.
 */

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
  employer: { words: "job|employer|company|hired|works at|work at|firma|angestellt", parts: "arbeitgeber|arbeitsstelle", zh: "工作|公司|上班" },
  role: { words: "role|position|job title|title", parts: "berufsbezeichnung", zh: "职位|职务|头衔" },
  dentist: { words: "dentist|dental", parts: "zahnarzt|zahnärzt", zh: "牙医|牙科" },
  doctor: { words: "doctor|family doctor|gp|physician|arzt|ärztin", parts: "hausarzt|hausärzt", zh: "医生|家庭医生" },
  paediatrician: { words: "paediatrician|pediatrician", parts: "kinderarzt|kinderärzt", zh: "儿科" },
  wifi: { words: "wifi|wi-fi|wlan|wireless|router|password|network|passwort", parts: "wlan", zh: "无线|网络|密码" },
  internet: { words: "internet|broadband|dsl|internet contract", parts: "internet|glasfaser", zh: "宽带" },
  gym: { words: "gym|fitness|train at", parts: "fitnessstudio", zh: "健身" },
  car: { words: "car|vehicle|licence plate|license plate|registration|auto", parts: "kennzeichen", zh: "车牌|汽车" },
  rent: { words: "rent|monthly rent|miete", parts: "kaltmiete|warmmiete", zh: "房租|租金" },
  salary: { words: "salary|paycheck|wage|wages|salary account|bank account|current account|iban|gehalt", parts: "girokonto", zh: "工资|薪水" },
  hairdresser: { words: "hairdresser|hair|haircut|barber|salon", parts: "friseur|frisör", zh: "理发|发型" },
  restaurant: { words: "restaurant|favourite restaurant|favorite restaurant|eat out|place to eat", parts: "lieblingslokal|restaurant", zh: "餐厅|饭店|馆子" },
  school: { words: "school|kindergarten|daycare|nursery|kita", parts: "kita|kindergarten|schule", zh: "幼儿园|学校" },
  insurance: { words: "insurance|insurer", parts: "versicherung", zh: "保险" },
  bank: { words: "bank", zh: "银行" },
  landlord: { words: "landlord|landlady|property manager", parts: "vermieter|hausverwaltung", zh: "房东" },
  // A change used as a point in time ("since we moved, …"): it takes its words and names no slot.
  [WHEN]: { words: "since we moved|after we moved|since moving|after moving|before we moved|seit dem umzug|nach dem umzug|vor dem umzug", zh: "搬家以后|搬家后" },
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

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Lower-cased word or phrase → its slot. */
const SLOT_OF = new Map<string, string>()
const ALTERNATIVES: Array<{ word: string; pattern: string }> = []
for (const [slot, { words, parts = "", zh = "" }] of Object.entries(SLOTS)) {
  for (const word of words.split("|")) ALTERNATIVES.push({ word, pattern: `(?<![\\p{L}\\p{N}])${escape(word)}(?:e?s)?(?![\\p{L}\\p{N}])` })
  for (const word of [...parts.split("|"), ...zh.split("|")].filter(Boolean)) ALTERNATIVES.push({ word, pattern: escape(word) })
  for (const word of [...words.split("|"), ...parts.split("|"), ...zh.split("|")].filter(Boolean)) SLOT_OF.set(word, slot)
}
/** One pass over a text: at each place the longest entry that matches there wins. */
const LEXICON = new RegExp(
  ALTERNATIVES.sort((a, b) => b.word.length - a.word.length)
    .map(({ pattern }) => pattern)
    .join("|"),
  "giu",
)

/** The slots `text` names, first-named first; a narrower slot brings its broader one. */
export function slotsOf(text: string): string[] {
  const slots: string[] = []
  for (const match of text.matchAll(LEXICON)) {
    const found = match[0].toLowerCase()
    const slot = SLOT_OF.get(found) ?? SLOT_OF.get(found.replace(/e?s$/, "")) ?? SLOT_OF.get(found.replace(/s$/, ""))
    for (const named of [slot, slot && BROADER[slot]]) if (named && named !== WHEN && !slots.includes(named)) slots.push(named)
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
