/**
 * Background notes for the retrieval set: everyday entries in English and German drawn from
 * templates with a fixed seed, so term statistics look like a real memory of a few hundred
 * notes and the answers have to stand out from them.
 */
import { seededRandom } from "../random.ts"
import type { SetNote } from "./notes.ts"

const PEOPLE = ["Anna", "Mia", "Jonas", "Oma Ingrid", "Papa", "Marta", "Daniel", "Priya", "the Beckers", "Tom", "Lea", "Herr Yilmaz"]
const PLACES = ["the market", "the office", "Ottensen", "the Elbe", "Planten un Blomen", "the library", "the school", "the station", "Altona", "the park"]
const ITEMS = ["milk", "bread", "coffee beans", "apples", "nappies", "batteries", "light bulbs", "tomatoes", "rice", "olive oil", "dish soap", "cheese"]
const TOPICS = ["the holiday plans", "the quarterly report", "the kitchen budget", "school supplies", "the birthday party", "the new sofa", "the train tickets", "the garden", "the project deadline", "the tax documents"]
const ACTIVITIES = ["a walk", "a bike ride", "pancakes", "a board game", "a museum visit", "a picnic", "swimming", "a cinema evening", "baking", "football"]
const DE_ITEMS = ["Milch", "Brot", "Kaffee", "Äpfel", "Windeln", "Batterien", "Tomaten", "Reis", "Käse", "Spülmittel"]
const DE_TOPICS = ["die Urlaubsplanung", "den Elternbeirat", "die Kündigung des Stromvertrags", "das Sommerfest", "die neue Küche", "die Zugtickets", "den Garten", "die Geburtstagsfeier"]

const EN_TEMPLATES: Array<(pick: <T>(list: T[]) => T) => string> = [
  (p) => `Groceries: bought ${p(ITEMS)}, ${p(ITEMS)} and ${p(ITEMS)} at ${p(PLACES)}.`,
  (p) => `Call with ${p(PEOPLE)} about ${p(TOPICS)}; follow up next week.`,
  (p) => `Weekend: ${p(ACTIVITIES)} with ${p(PEOPLE)} near ${p(PLACES)}.`,
  (p) => `Work: finished the draft on ${p(TOPICS)}, ${p(PEOPLE)} reviews it on Monday.`,
  (p) => `Idea: ask ${p(PEOPLE)} about ${p(TOPICS)} before the end of the month.`,
  (p) => `${p(PEOPLE)} lent us a book; return it at ${p(PLACES)}.`,
  (p) => `Paid ${p(["5", "8", "12", "20"])} euros for ${p(ITEMS)} and parking near ${p(PLACES)}.`,
  (p) => `Mia wants ${p(ACTIVITIES)} on Sunday; check the weather and the bus times.`,
  (p) => `Note from the meeting about ${p(TOPICS)}: numbers look fine, decision next week.`,
  (p) => `Remember to bring ${p(ITEMS)} when visiting ${p(PEOPLE)}.`,
]

const DE_TEMPLATES: Array<(pick: <T>(list: T[]) => T) => string> = [
  (p) => `Einkauf: ${p(DE_ITEMS)}, ${p(DE_ITEMS)} und ${p(DE_ITEMS)} besorgt.`,
  (p) => `Telefonat mit ${p(PEOPLE)} über ${p(DE_TOPICS)}, nächste Woche wieder melden.`,
  (p) => `Termin mit ${p(PEOPLE)} wegen ${p(DE_TOPICS)} verschoben.`,
  (p) => `Am Wochenende ${p(["Ausflug an die Elbe", "Spieleabend", "Flohmarkt", "Radtour", "Besuch bei Oma"])} mit ${p(PEOPLE)}.`,
  (p) => `Nicht vergessen: ${p(DE_ITEMS)} für ${p(PEOPLE)} mitbringen.`,
]

/** `count` background notes for `user`, dated 2023-06 to 2026-03. */
export function fillerNotes(user: "A" | "B", count: number, seed: number): SetNote[] {
  const random = seededRandom(seed)
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!
  const notes: SetNote[] = []
  for (let i = 0; i < count; i++) {
    const day = new Date(Date.UTC(2023, 5, 1 + Math.floor(random() * 1000))).toISOString().slice(0, 10)
    const templates = random() < 0.25 ? DE_TEMPLATES : EN_TEMPLATES
    notes.push({ id: `filler-${i}`, user, date: day, text: pick(templates)(pick) })
  }
  return notes
}
