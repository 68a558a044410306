/**
 * The questions of the retrieval set, each with the notes (ids in notes.ts) that answer it.
 * Any of `expect` in the top five is a hit; for a changed fact `expect[0]` is the current note,
 * which must come first. Paraphrase queries share (almost) no word with their answer: only
 * hybrid search is measured on them.
 */

export type QueryKind = "changed" | "de" | "typo" | "inflection" | "question" | "distractor" | "window" | "paraphrase"

export interface SetQuery {
  kind: QueryKind
  query: string
  expect: string[]
  /** For a changed fact, the notes that state it now (default: expect[0]); one of them must come first. */
  current?: string[]
  /** Inclusive YYYY-MM-DD bounds, as search_memory's after/before. */
  after?: string
  before?: string
}

const q = (kind: QueryKind, query: string, ...expect: string[]): SetQuery => ({ kind, query, expect })
/** A changed fact stated now by several notes (in two languages, or by two notes naming the new employer): any of them first. */
const changed = (query: string, ...current: string[]): SetQuery => ({ kind: "changed", query, expect: current, current })
const window = (query: string, bounds: { after?: string; before?: string }, ...expect: string[]): SetQuery => ({ kind: "window", query, expect, ...bounds })

export const QUERIES: SetQuery[] = [
  changed("what is our home address", "address-hamburg", "zh-address-new"),
  changed("who is my manager", "manager-tessaro", "zh-manager-new"),
  changed("what is my mobile number", "mobile-new", "zh-phone-new"),
  q("changed", "who is my dentist", "dentist-hoffmann"),
  changed("wifi password", "wifi-hamburg", "zh-wifi-new"),
  q("changed", "which gym do I train at", "gym-climb"),
  q("changed", "licence plate of our car", "car-skoda"),
  q("changed", "family doctor", "gp-haddad"),
  q("changed", "how much is the rent", "rent-hamburg"),
  q("changed", "internet customer number", "internet-vodafone"),
  q("changed", "Kinderärztin von Mia", "kinderarzt-yildiz"),
  q("changed", "where is my salary paid", "salary-ing"),

  q("changed", "what is my work email", "email-tessaro"),
  q("changed", "who is my hairdresser", "hair-schnittwerk"),
  q("changed", "what is my job title", "role-tessaro"),
  q("changed", "Anna's phone number", "anna-phone-new"),
  q("changed", "our favourite restaurant", "restaurant-mar"),
  changed("我们家的地址", "zh-address-new", "address-hamburg"),
  changed("我的手机号码是多少", "zh-phone-new", "mobile-new"),
  changed("我的经理是谁", "zh-manager-new", "manager-tessaro"),
  changed("家里WiFi密码", "zh-wifi-new", "wifi-hamburg"),
  changed("Wer ist mein Arbeitgeber", "de-arbeitgeber-new", "manager-tessaro", "role-tessaro"),
  q("changed", "Festnetznummer", "de-festnetz-new"),
  q("changed", "Mias Kita", "de-kita-new"),

  q("de", "Kitagutschein verlängern", "kita-gutschein"),
  q("de", "Wer hat Mia dienstags abgeholt", "abholung"),
  q("de", "Termin beim Zahnarzt", "zahnarzttermin"),
  q("de", "Nebenkosten Nachzahlung", "nebenkosten"),
  q("de", "Steuererklärung abgeben", "steuer"),
  q("de", "Besichtigung der Wohnung", "besichtigung"),
  q("de", "Wann ist Mias Schwimmkurs", "schwimmkurs", "swimming-en"),
  q("de", "Versicherung gekündigt", "hausrat"),
  q("de", "Reifen wechseln", "reifen"),
  q("de", "Elternabende in der Schule", "elternabend"),
  q("de", "wann wird die Biotonne geleert", "biotonne"),
  q("de", "Wo ist der Schlüssel", "ersatzschluessel", "spare-key"),
  q("de", "Geschenk zum Geburtstag für Papa", "geschenk-papa"),
  q("de", "Heizung tropft", "heizung"),
  q("de", "Krankmeldung einreichen", "krankmeldung"),
  q("de", "Zahnarzt im Dezember", "zahnarzttermin"),
  q("de", "Besichtigungstermin", "besichtigung"),
  q("de", "Winterreifen einlagern", "reifen"),
  q("de", "Heizungen tropfen", "heizung"),

  q("typo", "dentst bill", "dentist-bill"),
  q("typo", "plumer phone", "plumber"),
  q("typo", "pasport renewal", "passport-renewal"),
  q("typo", "insurence number", "insurance-number"),
  q("typo", "Mia vacination", "vaccination"),
  q("typo", "babysiter", "babysitter"),
  q("typo", "electricty meter", "meter-2025", "meter-2024"),
  q("typo", "laptop reciept", "laptop-receipt"),
  q("typo", "landlrod email", "landlord"),
  q("typo", "bicyle lock code", "bicycle-lock"),
  q("typo", "parkng permit", "parking-permit"),
  q("typo", "Zahnarzttermn", "zahnarzttermin"),
  q("typo", "plumer", "plumber"),
  q("typo", "pasport", "passport-renewal", "passport-expiry"),
  q("typo", "Steuererklrung", "steuer"),

  q("inflection", "running shoes", "running"),
  q("inflection", "meetings with the architect", "architect"),
  q("inflection", "bought flowers", "flowers"),
  q("inflection", "paying taxes", "tax-payment"),
  q("inflection", "renewed the lease", "lease"),
  q("inflection", "cancelled subscriptions", "newspaper"),
  q("inflection", "roof repairs", "roof"),
  q("inflection", "vaccinations for Mia", "vaccination"),

  q("question", "when is Mia's swimming lesson?", "swimming-en", "schwimmkurs"),
  q("question", "where did I put the spare key?", "spare-key", "ersatzschluessel"),
  q("question", "what did the plumber say about the sink?", "plumber"),
  q("question", "how old is the boiler?", "boiler"),
  q("question", "when does my passport expire?", "passport-expiry"),
  q("question", "who is Mia's teacher at school?", "teacher"),
  q("question", "what's the name of the neighbours' dog?", "dog"),
  q("question", "how much was the roof repair quote?", "roof"),

  q("question", "what was the name of the plumber?", "plumber"),
  q("question", "wann habe ich die Steuererklärung abgegeben?", "steuer"),
  q("question", "wo liegt der Ersatzschlüssel?", "ersatzschluessel", "spare-key"),
  q("question", "什么时候飞里斯本？", "zh-flight", "flight-lisbon"),
  q("question", "can you remind me what the landlord's email is?", "landlord"),
  q("question", "what did I note about the boiler service?", "boiler"),

  q("distractor", "parking permit number", "parking-permit"),
  q("distractor", "when is Anna's birthday", "anna-birthday"),
  q("distractor", "Mia's shoe size", "shoe-size-mia"),
  q("distractor", "my tax ID", "tax-id"),
  q("distractor", "flight to Lisbon", "flight-lisbon"),

  window("dentist", { before: "2024-12-31" }, "dentist-weber"),
  window("electricity meter reading", { after: "2024-12-01" }, "meter-2025"),
  window("home address", { before: "2024-12-31" }, "address-berlin", "address-berlin-reminder"),
  window("wifi password", { before: "2025-01-01" }, "wifi-berlin"),
  window("manager", { after: "2025-06-01" }, "manager-tessaro"),
  window("what is my mobile number", { before: "2025-06-30" }, "mobile-old"),
  window("我的手机号码", { before: "2025-01-01" }, "zh-phone-old"),
  window("who is my hairdresser", { before: "2025-06-01" }, "hair-kamm"),
  window("work email", { after: "2024-01-01", before: "2024-12-31" }, "email-corvel"),
  window("Anna", { after: "2024-03-01", before: "2024-03-31" }, "anna-phone-old"),
  window("when was the dentist appointment?", { after: "2025-11-01", before: "2025-11-30" }, "zahnarzttermin", "dentist-bill"),


  q("paraphrase", "tooth doctor", "dentist-hoffmann", "dentist-weber", "dentist-bill", "zahnarzttermin"),
  q("paraphrase", "flat cellar compartment", "storage"),
  q("paraphrase", "who minds the children at night", "childcare-evenings", "babysitter"),
  q("paraphrase", "vehicle registration", "car-skoda", "car-golf"),
  q("paraphrase", "physician for my daughter", "kinderarzt-yildiz", "kinderarzt-brandt", "paediatric-check"),
  q("paraphrase", "housing costs each month", "rent-hamburg", "rent-berlin"),
  q("paraphrase", "cell phone", "mobile-new", "mobile-old"),
  q("paraphrase", "bike padlock", "bicycle-lock"),
  q("paraphrase", "where do we live now", "address-hamburg"),
  q("paraphrase", "router login", "wifi-hamburg", "wifi-berlin"),
  q("paraphrase", "wage deposit bank", "salary-ing", "salary-sparkasse"),
  q("paraphrase", "garbage pickup", "biotonne"),
]
