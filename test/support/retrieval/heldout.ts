/**
 * A held-out set for "the current fact comes first", written without looking at the word lists
 * of src/memory/facts.ts and never tuned against: note series the way people write notes and
 * the way `remember` stores them, in English, German and Chinese. Each case is one user's
 * folder (so cases never interfere) with the same everyday background notes around it.
 *
 * The kinds say what a case tests:
 * - restated: the new value without any word of change ("Address: 5 Elm Rd" after "I live at 12 Oak St")
 * - third-person: a fact about someone else that changed ("Anna's manager is now Raj")
 * - relative: the change told relative to its day ("we moved last week")
 * - correction: "actually it's 14, not 12"
 * - other-person: a newer note states the same kind of fact about someone else: the user's own stays first
 * - other-entity: a newer note states a different thing of the same kind (work phone vs mobile): the old one stays first
 * - mention: a newer note only mentions the subject (an appointment at the vet): the fact stays first
 */
export type HeldOutKind = "restated" | "third-person" | "relative" | "correction" | "other-person" | "other-entity" | "mention"

export interface HeldOutCase {
  kind: HeldOutKind
  lang: "en" | "de" | "zh"
  /** [date YYYY-MM-DD, text], oldest first. */
  notes: Array<[string, string]>
  query: string
  /** Index in `notes` of the note that must rank first. */
  current: number
}

const c = (kind: HeldOutKind, lang: HeldOutCase["lang"], query: string, current: number, ...notes: Array<[string, string]>): HeldOutCase => ({ kind, lang, query, current, notes })

export const HELD_OUT: HeldOutCase[] = [
  // ---- English -------------------------------------------------------------------------
  c("restated", "en", "where do we live now", 1, ["2024-02-10", "I live at 12 Oak Street, Springfield."], ["2025-06-03", "Address: 5 Elm Rd, Shelbyville"]),
  c("third-person", "en", "who is Anna's manager", 1, ["2024-04-02", "Anna's manager is Claire Dubois."], ["2025-03-18", "Anna's manager is now Raj Patel."]),
  c("relative", "en", "what's our address", 1, ["2023-11-05", "Home: 22 Birch Lane, Leeds LS6 2AB"], ["2025-04-14", "We moved last week, the new place is 9 Canal Street, Manchester."]),
  c("restated", "en", "who is my dentist", 1, ["2024-01-20", "Dentist is Dr. Morgan at Smile Studio, 020 7946 0011."], ["2025-05-07", "Dentist: Dr. Ahmed, Bright Teeth Clinic on Mill Road"]),
  c("restated", "en", "who's my doctor", 1, ["2024-03-11", "My GP is Dr. Fletcher at Riverside Surgery."], ["2025-02-25", "Registered at Parkview Medical Centre, my doctor there is Dr. Osei."]),
  c("restated", "en", "what gym am I a member of", 1, ["2024-01-08", "Gym membership: PureGym Kings Cross, 24 pounds a month."], ["2025-01-06", "Now going to Third Space in Islington for the gym."]),
  c("restated", "en", "what's the plate number of my car", 1, ["2023-09-30", "Car: silver Toyota Yaris, reg AB12 CDE"], ["2025-03-02", "Picked up the new car today, a red Mazda 3, plate KX71 LMN."]),
  c("restated", "en", "my bank account details", 1, ["2024-05-19", "Bank: Barclays, sort code 20-00-00, account 12345678"], ["2025-07-22", "Switched my current account to Monzo, sort code 04-00-04, account 87654321."]),
  c("restated", "en", "what's my email", 1, ["2023-10-01", "Email: sam.green@oldmail.com"], ["2025-01-15", "My email address is sam@greenworks.dev"]),
  c("restated", "en", "wifi password", 1, ["2024-06-12", "Wifi password: sunflower88"], ["2025-08-09", "Changed the wifi password to Blue-Harbour-19"]),
  c("restated", "en", "who is my partner", 1, ["2023-05-14", "My girlfriend is Emma Wright."], ["2025-02-14", "Partner: Lucy Chen, together since last autumn."]),
  c("third-person", "en", "which school does Leo go to", 1, ["2024-09-04", "Leo goes to Hillside Primary School."], ["2025-09-03", "Leo started at Oakwood Academy this week."]),
  c("restated", "en", "what's my favourite coffee", 1, ["2024-02-02", "Favourite coffee: flat white"], ["2025-04-20", "These days my favourite coffee order is an oat cortado."]),
  c("correction", "en", "what am I allergic to", 1, ["2023-12-01", "Allergy: penicillin (rash)."], ["2024-01-12", "Correction: my allergy is to amoxicillin, not penicillin."]),
  c("restated", "en", "where do I work", 1, ["2023-06-19", "I work at Acme Corp as a product designer."], ["2025-03-03", "Started at Globex on Monday, design team."]),
  c("restated", "en", "what is my job title", 1, ["2024-02-27", "Job title: Software Engineer II"], ["2025-06-30", "Got promoted, I'm a Senior Software Engineer now."]),
  c("relative", "en", "which team am I on", 1, ["2024-04-09", "I'm on the Payments team."], ["2025-03-21", "Moved to the Platform team this month."]),
  c("restated", "en", "how much is our rent", 1, ["2024-07-01", "Rent is 1,800 dollars a month."], ["2025-06-15", "Landlord raised the rent to 1,950 dollars from July."]),
  c("correction", "en", "what's our flat number", 1, ["2025-02-01", "Our flat is number 12."], ["2025-02-03", "Actually it's flat 14, not 12."]),
  c("correction", "en", "locker code", 1, ["2025-01-06", "Locker code is 4471"], ["2025-01-09", "The locker code is actually 4417, I had it backwards."]),
  c("relative", "en", "where does Dad live now", 1, ["2023-08-12", "Dad lives in Cork."], ["2025-05-28", "Dad moved to Galway last month."]),
  c("restated", "en", "my phone number", 2, ["2023-03-03", "Phone: 555-0100"], ["2024-04-04", "New number 555-0199"], ["2025-05-05", "Number: 555-0142"]),
  c("other-person", "en", "what is my address", 0, ["2024-03-15", "My address is 3 Rose Court, Bristol BS1 4DJ."], ["2025-05-10", "My sister Kate's new address is 77 Hill Road, Bath."]),
  c("other-entity", "en", "what's my mobile number", 0, ["2024-01-30", "Mobile: 07700 900123"], ["2025-04-11", "Work phone: 020 7946 0958"]),
  c("other-person", "en", "who is my manager", 0, ["2024-06-03", "My manager is Priya Shah."], ["2025-02-19", "Tom's manager is now Alex Rivera."]),
  c("other-person", "en", "who is my dentist", 0, ["2024-02-08", "My dentist is Dr. Singh on Church Street."], ["2025-03-27", "Mum's dentist is Dr. Lopez in Croydon."]),
  c("mention", "en", "who is Biscuit's vet", 0, ["2024-05-05", "Vet for Biscuit: Dr. Ruiz at PawCare."], ["2025-06-06", "Biscuit's vet appointment moved to Friday at 10."]),

  // ---- German --------------------------------------------------------------------------
  c("restated", "de", "wo wohnen wir jetzt", 1, ["2024-02-14", "Ich wohne in der Bergstraße 7, München."], ["2025-07-01", "Adresse: Seeweg 2, 82319 Starnberg"]),
  c("restated", "de", "wer ist mein Zahnarzt", 1, ["2024-01-22", "Mein Zahnarzt ist Dr. Keller in Schwabing."], ["2025-03-10", "Zahnarzt: Dr. Öztürk, Praxis am See"]),
  c("restated", "de", "wo arbeite ich", 1, ["2023-04-03", "Ich arbeite bei Siemens in Erlangen."], ["2025-04-01", "Seit April bin ich bei der Allianz, im Team Schaden."]),
  c("third-person", "de", "wer ist Lisas Chef", 1, ["2024-05-06", "Lisas Chefin ist Frau Braun."], ["2025-02-03", "Lisa hat einen neuen Chef, Herrn Wolf."]),
  c("other-person", "de", "meine Handynummer", 0, ["2024-03-19", "Meine Handynummer ist 0171 2233445."], ["2025-01-28", "Die Handynummer meines Bruders ist 0160 9988776."]),
  c("restated", "de", "wie hoch ist die Miete", 1, ["2024-01-01", "Die Miete beträgt 980 Euro warm."], ["2025-01-02", "Ab Januar zahlen wir 1.040 Euro Miete."]),
  c("restated", "de", "Kennzeichen von unserem Auto", 1, ["2023-07-07", "Unser Auto: VW Polo, Kennzeichen M-AB 123"], ["2025-05-16", "Das neue Auto ist ein Opel Corsa, Kennzeichen STA-XY 45."]),
  c("restated", "de", "WLAN Passwort", 1, ["2024-04-04", "WLAN-Passwort: Sonnenblume2024"], ["2025-08-18", "WLAN-Passwort ist jetzt Regenbogen#7"]),
  c("correction", "de", "Kundennummer Stadtwerke", 1, ["2025-01-13", "Kundennummer bei den Stadtwerken: 4471102"], ["2025-01-20", "Korrektur: die Kundennummer ist 4471120, nicht 4471102."]),
  c("restated", "de", "wer ist unsere Hausärztin", 1, ["2024-02-20", "Hausärztin: Dr. Weiß, Leopoldstraße"], ["2025-07-15", "Wir gehen jetzt zu Dr. Hahn in Starnberg, neue Hausärztin."]),
  c("relative", "de", "unsere Adresse", 1, ["2024-06-06", "Unsere Adresse: Lindenallee 3, 50968 Köln"], ["2025-06-20", "Wir sind letzte Woche umgezogen und wohnen jetzt in der Gartenstraße 9, Bonn."]),
  c("restated", "de", "welches Fitnessstudio", 1, ["2024-01-09", "Ich trainiere bei McFit am Stachus."], ["2025-02-11", "Fitnessstudio: John Reed in der Innenstadt"]),

  // ---- Chinese -------------------------------------------------------------------------
  c("restated", "zh", "我现在住哪里", 1, ["2024-03-08", "我住在朝阳区建国路88号。"], ["2025-05-20", "地址：海淀区中关村大街1号"]),
  c("restated", "zh", "我的牙医是谁", 1, ["2024-02-18", "我的牙医是张医生。"], ["2025-04-09", "牙医：刘医生，仁和口腔诊所"]),
  c("restated", "zh", "我在哪里工作", 1, ["2023-05-15", "我在阿里巴巴工作。"], ["2025-03-12", "上个月入职了腾讯，做产品经理。"]),
  c("third-person", "zh", "小王的经理是谁", 1, ["2024-06-11", "小王的经理是李总。"], ["2025-01-23", "小王的经理现在是陈总。"]),
  c("other-person", "zh", "我的手机号", 0, ["2024-04-16", "我的手机号是13800138000。"], ["2025-02-26", "妈妈的手机号是13912345678。"]),
  c("restated", "zh", "房租多少", 1, ["2024-03-01", "房租每月5000元。"], ["2025-03-01", "房东把房租涨到了5500。"]),
  c("correction", "zh", "车牌号", 1, ["2025-01-05", "车牌号是京A12345。"], ["2025-01-10", "更正：车牌号是京A12354，不是京A12345。"]),
  c("restated", "zh", "WiFi密码是什么", 1, ["2024-07-07", "家里WiFi密码：abc12345"], ["2025-09-09", "WiFi密码改成了xyz98765"]),
  c("restated", "zh", "我去哪个健身房", 1, ["2024-02-06", "我在一兆韦德健身房锻炼。"], ["2025-04-22", "健身房换成了乐刻。"]),
  c("other-person", "zh", "我家地址", 0, ["2024-05-12", "我家地址是浦东新区世纪大道100号。"], ["2025-06-18", "姐姐的新地址是徐汇区漕溪北路20号。"]),
  c("relative", "zh", "我们住在哪", 1, ["2023-09-01", "我们住在上海静安区。"], ["2025-07-08", "上周搬家了，新家在杭州西湖区文三路。"]),
  c("third-person", "zh", "儿子在哪个学校", 1, ["2024-09-02", "儿子在实验小学上学。"], ["2025-09-01", "儿子转学到育才小学了。"]),
]

/** Everyday notes around every case: mentions of the same subjects that state no fact. */
export const HELD_OUT_BACKGROUND: Array<[string, string]> = [
  ["2023-07-02", "Groceries: milk, eggs, bread and coffee beans."],
  ["2023-10-14", "Called the dentist to move the check-up to Tuesday."],
  ["2024-01-17", "Paid the rent late this month, remember the standing order."],
  ["2024-03-22", "Car wash and tyre pressure check on Saturday."],
  ["2024-05-30", "Anna's birthday is on 12 June, get her a book."],
  ["2024-08-08", "Wifi was down all evening, the router needed a restart."],
  ["2024-10-10", "Team lunch on Friday, the manager pays."],
  ["2024-11-11", "Doctor said to drink more water and sleep more."],
  ["2025-01-19", "Work: quarterly report due next Thursday."],
  ["2025-03-30", "Gym was packed today, go earlier next time."],
  ["2025-05-25", "Phone screen cracked, repair shop on the high street."],
  ["2025-08-01", "School holidays start in two weeks, book the train."],
  ["2025-10-03", "Email from the bank about new card terms, nothing to do."],
  ["2023-09-09", "Einkauf: Brot, Käse und Äpfel."],
  ["2024-04-27", "Termin beim Zahnarzt verschoben auf Donnerstag."],
  ["2024-09-19", "Miete für Oktober überwiesen."],
  ["2025-02-22", "Auto in der Werkstatt, Ölwechsel und neue Bremsen."],
  ["2025-06-11", "Chef hat das Meeting auf Montag verlegt."],
  ["2025-09-14", "Handy aufladen nicht vergessen, Ladekabel ist im Auto."],
  ["2023-12-24", "今天去超市买了牛奶和面包。"],
  ["2024-06-21", "周末和朋友去公园散步。"],
  ["2025-01-31", "牙医提醒我半年后复查。"],
  ["2025-04-04", "房租这个月已经交了。"],
  ["2025-08-28", "手机屏幕碎了，下周去修。"],
]
