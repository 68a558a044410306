import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { factOf, slotsOf } from "../../src/memory/facts.ts"
import { Memory } from "../../src/memory/memory.ts"
import { Supersession, updatesOf } from "../../src/memory/supersede.ts"
import { withRecency } from "../../src/memory/recency.ts"

const note = (date: string, text: string, source = `memory/${date}-${text.slice(0, 12).replace(/\W+/g, "-")}.md`) => ({ source, date, text })
const asked = (query: string, window: { after?: string; before?: string } = {}) => ({ query, ...window })

/** Pairs worded unlike the retrieval set's: an older statement and the note that replaces it. */
const CHANGES: Array<[old: string, update: string, query: string]> = [
  ["I live at Rosenweg 5 in Leipzig.", "Moving day done, our place is now Kastanienallee 12, Dresden.", "where do I live"],
  ["Telefon zu Hause: 0341 998877", "Wir haben jetzt einen neuen Telefonanschluss: 0351 112233", "Telefonnummer"],
  ["My boss is Karen Li.", "Reorg: I report to Tom Berger now, he is my new manager.", "who is my boss"],
  ["我的牙医是王医生。", "换了牙医，现在去城东牙科看李医生。", "我的牙医"],
  ["Our internet provider is 1&1, DSL 100.", "Switched the internet to fibre with Deutsche Glasfaser.", "internet provider"],
  ["Mein Friseur ist Salon Haarmonie.", "Ab sofort gehe ich zu Friseur Schnittpunkt in Altona.", "Friseur"],
  ["I go to the gym at McFit on Mondays.", "Cancelled McFit, these days I train at the climbing gym.", "which gym"],
]

describe("facts that replace facts", () => {
  it.each(CHANGES)("a change worded differently replaces the older note: %s", (old, update, query) => {
    const older = note("2024-03-01", old)
    const newer = note("2025-06-01", update)
    const supersession = new Supersession(updatesOf([older, newer]))
    expect(supersession.currentOf(older, asked(query))?.source).toBe(newer.source)
    // Nothing replaces the newer note, and a window that ends before the change keeps the old one current.
    expect(supersession.currentOf(newer, asked(query))).toBeUndefined()
    expect(supersession.currentOf(older, asked(query, { before: "2025-01-01" }))).toBeUndefined()
  })

  it("does not link notes about another person, another slot, or without a word of change", () => {
    const mine = note("2024-01-01", "My mobile number is 0151 111 222.")
    const annas = note("2025-01-01", "Anna's new mobile is 0172 333 444.")
    const landline = note("2025-02-01", "New landline at home: 040 555 666.")
    const bill = note("2025-03-01", "Paid the mobile bill, 25 euros.")
    const supersession = new Supersession(updatesOf([mine, annas, landline, bill]))
    expect(supersession.currentOf(mine, asked("my mobile number"))).toBeUndefined()
    const annaOld = note("2024-02-01", "Anna's phone number is 0151 999 000.")
    expect(supersession.currentOf(annaOld, asked("Anna's phone"))?.source).toBe(annas.source)
  })

  it("does not let a note that merely mentions a contact replace a person's details", () => {
    const landlord = note("2024-05-01", "Landlord is Mr Petersen, email petersen@example.org.")
    const email = note("2025-05-01", "My new email is me@example.net.")
    expect(new Supersession(updatesOf([landlord, email])).currentOf(landlord, asked("landlord email"))).toBeUndefined()
  })

  it("picks, among notes restating one change in two languages, the question's language", () => {
    const older = note("2024-01-01", "Our home address is Lindenstraße 14, Berlin.")
    const english = note("2025-09-20", "We moved! New home: Hafenweg 3, Hamburg.")
    const chinese = note("2025-09-21", "已经搬到汉堡了，现在住在港口路3号。")
    const supersession = new Supersession(updatesOf([older, english, chinese]))
    expect(supersession.currentOf(older, asked("home address"))?.source).toBe(english.source)
    expect(supersession.currentOf(older, asked("我们家的地址"))?.source).toBe(chinese.source)
  })

  it("names slots longest phrase first, and a narrower slot with its broader one", () => {
    expect(slotsOf("My email address is a@b.c")).toEqual(["email"])
    expect(slotsOf("Neue Handynummer")).toEqual(["mobile", "phone"])
    expect(factOf("Mias Kita ist die Kita Sonnenschein")?.owners).toEqual(["mia"])
    expect(factOf("我在Corvel的经理是Priya")?.owners).toEqual([""])
    expect(factOf("Groceries: milk and bread")?.slots).toEqual(["label:grocerie"])
    expect(factOf("Milk and bread, then the park")).toBeUndefined()
  })

  it("keeps a current fact ahead of a newer note that only mentions its subject", () => {
    const hits = [
      { date: "2025-11-19", score: 10, covers: 1 },
      { date: "2025-10-12", score: 9, covers: 1, replaces: "memory/2023-11-20-dentist.md" },
    ]
    expect(withRecency(hits).map((hit) => hit.date)).toEqual(["2025-10-12", "2025-11-19"])
  })
})

describe("facts read from a note's structure", () => {
  const currentOf = (older: ReturnType<typeof note>, newer: ReturnType<typeof note>, query: string) => new Supersession(updatesOf([older, newer])).currentOf(older, asked(query))?.source

  it("replaces a fact restated with no word of change, by label, copula or value", () => {
    const address = note("2025-06-03", "Address: 5 Elm Rd")
    expect(currentOf(note("2024-02-10", "I live at 12 Oak Street."), address, "where do we live")).toBe(address.source)
    const number = note("2025-05-05", "Number: 555-0142")
    expect(currentOf(note("2024-01-30", "Phone: 555-0100"), number, "phone")).toBe(number.source)
  })

  it("replaces the note holding the value a correction calls wrong, and no other", () => {
    const flat = note("2025-02-01", "Our flat is number 12.")
    const paid = note("2025-02-02", "Paid 12 euros for cheese.")
    const correction = note("2025-02-03", "Actually it's flat 14, not 12.")
    const supersession = new Supersession(updatesOf([flat, paid, correction]))
    expect(supersession.currentOf(flat, asked("flat number"))?.source).toBe(correction.source)
    expect(supersession.currentOf(paid, asked("cheese"))).toBeUndefined()
  })

  it("keeps another thing of the kind, a relative's fact and a new thing beside it apart", () => {
    expect(currentOf(note("2024-01-30", "Mobile: 07700 900123"), note("2025-04-11", "Work phone: 020 7946 0958"), "mobile")).toBeUndefined()
    expect(currentOf(note("2024-03-19", "Meine Handynummer ist 0171 2233445."), note("2025-01-28", "Die Handynummer meines Bruders ist 0160 9988776."), "Handynummer")).toBeUndefined()
    expect(currentOf(note("2023-07-07", "Unser Auto: VW Polo"), note("2025-02-22", "Auto in der Werkstatt, Ölwechsel und neue Bremsen."), "Auto")).toBeUndefined()
    expect(currentOf(note("2024-02-28", "My tax ID is 12 345 678 901."), note("2025-10-05", "Babysitter Jonas: 0176 4455 6677"), "tax ID")).toBeUndefined()
  })

  it("treats a label as a kind of fact only when the question names it", () => {
    const older = note("2024-01-06", "Groceries: milk and eggs.")
    const newer = note("2025-01-06", "Groceries: bread and rice.")
    expect(currentOf(older, newer, "when did I buy milk")).toBeUndefined()
    const code = note("2025-01-09", "The locker code is 4417 now.")
    expect(currentOf(note("2025-01-06", "Locker code is 4471"), code, "locker code")).toBe(code.source)
  })
})

describe("a change used as a point in time", () => {
  it("names no slot", () => {
    expect(slotsOf("Since we moved, the place we love to eat out is Bistro Mar")).toEqual(["restaurant"])
    expect(slotsOf("Seit dem Umzug gehen wir zum Friseur Schnittpunkt")).toEqual(["hairdresser"])
  })
})

describe("search over facts that changed", () => {
  it("puts the current note first and marks the old one, and a window before the change finds the old one alone", async () => {
    const dir = await mkdtemp(join(tmpdir(), "steward-supersede-"))
    const memory = new Memory({ dir, scope: "shared" })
    try {
      const notes = join(dir, "shared", "memory")
      await mkdir(notes, { recursive: true })
      await writeFile(join(notes, "2024-01-15-mobile.md"), "My mobile number is 0151 2345 6789, mobile contract with O2.\n")
      await writeFile(join(notes, "2025-07-01-carrier.md"), "Switched carriers, my new number is 0160 9876 5432.\n")
      await writeFile(join(notes, "2025-08-01-groceries.md"), "Groceries: milk, bread and apples.\n")
      const hits = await memory.search("telegram:1", { query: "my mobile number", limit: 5 })
      expect(hits.map((hit) => [hit.source, hit.supersededBy])).toEqual([
        ["memory/2025-07-01-carrier.md", undefined],
        ["memory/2024-01-15-mobile.md", "memory/2025-07-01-carrier.md"],
      ])
      const then = await memory.search("telegram:1", { query: "my mobile number", limit: 5, before: new Date("2024-12-31T23:59:59") })
      expect(then.map((hit) => [hit.source, hit.supersededBy])).toEqual([["memory/2024-01-15-mobile.md", undefined]])
    } finally {
      await memory.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
