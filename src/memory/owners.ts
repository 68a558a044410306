/**
 * Whose fact a note states, read from the sentence's structure: a possessive ("Anna's",
 * "Mias Kita", "for Mia", "Mia的"), a relative's possessive ("my sister's", "meines Bruders",
 * "妈妈的", "小王的"), or a named subject that the sentence is about ("Dad moved to Galway",
 * "Leo goes to …", "Lisa hat …"). A note with none of these is the user's own (or the
 * household's): "I", "we", "my", or no subject at all, as notes are usually written.
 */

/** "Anna's", "Mia’s", "Mias Kita" (German: a name + s before a noun that names a slot), "for/für Mia", "Mia的" (not "在Corvel的", at Corvel). */
const NAMED = /(\p{Lu}\p{Ll}+)['’]s\b|\b(\p{Lu}\p{Ll}+)s\s+(\p{Lu}\p{Ll}+)|\b(?:for|für)\s+(\p{Lu}\p{Ll}+)\b|(?<!在)(\p{Lu}\p{Ll}+)的/gu

/** Relatives and people around the user, whose facts are not the user's. */
const KIN_EN = "sister|brother|mum|mom|mother|dad|father|wife|husband|son|daughter|grandma|grandpa|grandmother|grandfather|aunt|uncle|cousin|friend|colleague|neighbour|neighbor|boss|parents|kids?|child"
const KIN_DE = "schwester|bruders?|mutter|mama|vaters?|papas?|frau|mannes|sohne?s?|tochter|oma|opas?|tante|onkels?|cousine|cousins?|freundin|freunde?s?|kollegin|kollegen|nachbarin|nachbarn|eltern|kinde?s?"
const KIN_ZH = "妈妈|爸爸|母亲|父亲|姐姐|哥哥|弟弟|妹妹|老婆|老公|妻子|丈夫|儿子|女儿|爷爷|奶奶|外婆|外公|朋友|同事|邻居|孩子|父母"
/** "my sister's", "mum's" (lower case), "meines Bruders", "meiner Schwester", "von meiner Mutter", "妈妈的", "小王的", "老李的". */
const KIN = new RegExp(
  `\\b(?:(?:my|our)\\s+)?(${KIN_EN})['’]s?(?=\\s)|\\b(?:meine[rs]|unsere[rs]|von\\s+(?:meine[mr]|unsere[mr]))\\s+(${KIN_DE})\\b|(${KIN_ZH}|[小老]\\p{sc=Han})的`,
  "giu",
)
const VERB = "is|has|lives|moved|goes|started|works|joined|switched|changed|got|ist|hat|wohnt|arbeitet|geht|zieht|zog"
/** A named subject at the start of a note, followed by a verb of the third person: "Dad lives…", "Leo started…", "Lisa hat…". */
const SUBJECT_NAME = new RegExp(`^(\\p{Lu}\\p{Ll}+)\\s+(?:${VERB})\\b|^(${KIN_ZH}|[小老]\\p{sc=Han})(?!的)`, "u")
/** "My sister (Kate) moved…", "Meine Mutter wohnt…". */
const SUBJECT_KIN = new RegExp(`^(?:my|our|mein|meine|unser|unsere)\\s+(${KIN_EN}|${KIN_DE})(?:\\s+\\p{L}+)?\\s+(?:${VERB})\\b`, "iu")
/** Sentence starters that are not a person: pronouns, articles. */
const NOT_A_PERSON = new Set("i we you he she it they this that there the my our ich wir du er sie es das der die dies mein meine unser unsere".split(" "))
const NAME = /\p{Lu}\p{Ll}+/gu

/** The user: a fact with no named owner is the user's (or the household's). */
export const SELF = ""

export interface Owners {
  /** Whose fact: named possessors or subjects, or SELF. */
  owners: string[]
  /** Lower-cased capitalised words and owners: people the note mentions (SELF when it is the user's). */
  mentions: Set<string>
}

/** `namesSlot`: a capitalised first word that names a slot ("Rent is …") is not a subject; a German genitive comes before one. */
export function ownersOf(text: string, namesSlot: (word: string) => boolean): Owners {
  const owners = new Set<string>()
  for (const match of text.matchAll(NAMED)) {
    // "Kings Cross" is a place: a German genitive is followed by what the person has.
    if (match[2] && !namesSlot(match[3]!)) continue
    owners.add((match[1] ?? match[2] ?? match[4] ?? match[5])!.toLowerCase())
  }
  for (const match of text.matchAll(KIN)) owners.add(kinOf((match[1] ?? match[2] ?? match[3])!))
  const subject = SUBJECT_NAME.exec(text.trim()) ?? SUBJECT_KIN.exec(text.trim())
  const named = subject?.[1] ?? subject?.[2]
  if (named && !NOT_A_PERSON.has(named.toLowerCase()) && !namesSlot(named)) owners.add(kinOf(named))
  const mentions = new Set([...Array.from(text.matchAll(NAME), (match) => match[0].toLowerCase()), ...owners])
  if (owners.size === 0) mentions.add(SELF)
  return { owners: owners.size > 0 ? [...owners] : [SELF], mentions }
}

/** One name for a relative however inflected ("Bruders" → "bruder", "mom" and "mum" stay apart: they are written consistently). */
function kinOf(word: string): string {
  const lower = word.toLowerCase()
  return /^(bruders|vaters|papas|onkels|sohnes|sohns|freundes|kindes|opas|cousins|mannes)$/.test(lower) ? lower.replace(/e?s$/, "") : lower
}
