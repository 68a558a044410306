/**
 * The notes of the retrieval set: two years of one household's memory (user A), written for
 * this project — moves, a new job, a new dentist, German paperwork, near-duplicates — and a
 * few notes of another user (B) that overlap A's questions on purpose and must never come back.
 * Every note is a daily note `memory/<date>-<id>.md`; background notes (filler.ts) surround them.
 */

export interface SetNote {
  id: string
  user: "A" | "B"
  date: string
  text: string
}

const a = (date: string, id: string, text: string): SetNote => ({ id, user: "A", date, text })
const b = (date: string, id: string, text: string): SetNote => ({ id, user: "B", date, text })

export const NOTES: SetNote[] = [
  // ---- facts that changed: the newer note is the current one -------------------------------
  a("2024-03-02", "address-berlin", "Our home address is Lindenstraße 14, 10115 Berlin. Post goes to the name Keller on the letterbox."),
  a("2024-08-19", "address-berlin-reminder", "Reminder for forms: home address Lindenstraße 14, Berlin, second floor left."),
  a("2025-09-20", "address-hamburg", "We moved! New home address: Hafenweg 3, 20457 Hamburg, fourth floor."),
  a("2024-05-10", "manager-corvel", "My manager at Corvel is Priya Nair; one-to-one every second Monday."),
  a("2025-11-03", "manager-tessaro", "First week at the new job at Tessaro. My manager is Daniel Okafor, he prefers Slack over email."),
  a("2024-01-15", "mobile-old", "My mobile number is +49 151 2345 6789 (contract with O2)."),
  a("2025-07-01", "mobile-new", "Switched carriers: my mobile number is now +49 160 9876 5432."),
  a("2023-11-20", "dentist-weber", "Dentist: Dr. Weber, Schillerstraße 8, Berlin. Appointments only by phone, 030 441 2290."),
  a("2025-10-12", "dentist-hoffmann", "New dentist in Hamburg is Dr. Lena Hoffmann at Elbdental, Große Elbstraße 40."),
  a("2024-06-01", "wifi-berlin", "Home wifi password is tulip-42-river, network name Keller-Home."),
  a("2025-09-25", "wifi-hamburg", "Wifi at the new apartment: network Hafenweg3, password harbor-lights-77."),
  a("2024-02-12", "gym-fitbox", "Signed up at FitBox gym, training Monday and Thursday evenings."),
  a("2025-10-02", "gym-climb", "Cancelled FitBox. I now train at Urban Climb, a bouldering gym, on Tuesdays and Fridays."),
  a("2023-08-07", "car-golf", "Our car is a blue 2015 VW Golf, licence plate B-KL 2231."),
  a("2025-08-14", "car-skoda", "Sold the Golf. Our new car is a grey Skoda Octavia estate, licence plate HH-TR 884."),
  a("2024-04-03", "gp-schulz", "Family doctor: Dr. Schulz, practice on Torstraße, open mornings."),
  a("2025-10-20", "gp-haddad", "Registered with a new family doctor in Hamburg: Dr. Amira Haddad, Ottensen."),
  a("2024-02-01", "rent-berlin", "Monthly rent for the Berlin flat is 1,150 euros, paid on the 1st."),
  a("2025-09-05", "rent-hamburg", "Rent for the Hamburg apartment is 1,420 euros per month including heating."),
  a("2024-07-22", "internet-telekom", "Internet contract with Telekom, customer number 55012-77."),
  a("2025-09-28", "internet-vodafone", "Internet is now Vodafone cable at Hafenweg, customer number 88-1203-4."),
  a("2024-09-09", "kinderarzt-brandt", "Mias Kinderärztin ist Dr. Brandt in Prenzlauer Berg, Sprechstunde nur vormittags."),
  a("2025-10-08", "kinderarzt-yildiz", "Neue Kinderärztin für Mia in Hamburg: Dr. Yildiz, Praxis am Fischmarkt."),
  a("2024-10-01", "salary-sparkasse", "Salary is paid into my current account at Sparkasse Berlin."),
  a("2025-11-10", "salary-ing", "Moved my salary account to ING; Tessaro pays the salary on the 25th."),

  // ---- facts that changed, the update worded unlike the old note (the old one matches the
  //      question's words better), in English, Chinese and German; the Chinese notes restate
  //      some of the English ones (same values), as a bilingual user does ------------------
  a("2024-05-12", "email-corvel", "My work email is jonas.keller@corvel.com; the email signature has the Corvel logo."),
  a("2025-11-04", "email-tessaro", "IT set up my Tessaro account: mail goes to jonas.keller@tessaro.io from now on."),
  a("2024-06-14", "hair-kamm", "My hairdresser is Salon Kamm on Torstraße, a haircut every six weeks."),
  a("2025-10-18", "hair-schnittwerk", "Found a barber in Ottensen I like, Luca at Schnittwerk; I go there now."),
  a("2024-05-11", "role-corvel", "My job title at Corvel is Senior Analyst in the pricing team."),
  a("2025-11-01", "role-tessaro", "New role at Tessaro: Lead Data Engineer, started on 1 November."),
  a("2024-03-09", "anna-phone-old", "Anna's phone number is 0151 4422 9910."),
  a("2025-06-22", "anna-phone-new", "Anna's new mobile: 0172 8080 1212, the old contract is cancelled."),
  a("2024-04-20", "restaurant-lupo", "Our favourite restaurant is Trattoria Lupo; book the restaurant table by the window."),
  a("2025-10-11", "restaurant-mar", "Since we moved, the place we love to eat out is Bistro Mar in Altona."),
  a("2024-03-05", "zh-address-old", "我们家的地址是柏林林登街14号，信箱上写Keller。"),
  a("2025-09-21", "zh-address-new", "已经搬到汉堡了，现在住在港口路3号四楼。"),
  a("2024-01-16", "zh-phone-old", "我的手机号码是+49 151 2345 6789，O2的卡。"),
  a("2025-07-02", "zh-phone-new", "换了运营商，新号+49 160 9876 5432。"),
  a("2024-05-14", "zh-manager-old", "我在Corvel的经理是Priya，每两周一对一。"),
  a("2025-11-05", "zh-manager-new", "换工作了，现在的直属领导是Daniel。"),
  a("2024-06-02", "zh-wifi-old", "家里的WiFi密码是tulip-42-river，WiFi名字Keller-Home。"),
  a("2025-09-26", "zh-wifi-new", "新家的无线网：Hafenweg3，口令harbor-lights-77。"),
  a("2024-05-13", "de-arbeitgeber-old", "Mein Arbeitgeber ist Corvel, Büro in Mitte, Arbeitgeber zahlt das Jobticket."),
  a("2025-11-02", "de-arbeitgeber-new", "Seit November bin ich bei Tessaro angestellt."),
  a("2024-03-10", "de-festnetz-old", "Unsere Festnetznummer zu Hause ist 030 1234567."),
  a("2025-09-29", "de-festnetz-new", "Neuer Telefonanschluss in Hamburg: 040 7654321."),
  a("2024-08-20", "de-kita-old", "Mias Kita ist die Kita Sonnenschein in Pankow, Kita-Leitung Frau Berg."),
  a("2025-09-01", "de-kita-new", "Mia geht jetzt in den Kindergarten am Hafen."),
  a("2026-03-03", "zh-flight", "4月14日飞里斯本，早上6点40从汉堡出发。"),

  // ---- German ---------------------------------------------------------------------------------
  a("2025-01-14", "kita-gutschein", "Kita-Gutschein für Mia muss bis 31. März beim Bezirksamt verlängert werden."),
  a("2025-02-04", "abholung", "Die Abholung von Mia übernimmt dienstags Oma Ingrid, mittwochs ich selbst."),
  a("2025-11-18", "zahnarzttermin", "Zahnarzttermin am 14. Dezember um 9 Uhr bei Dr. Hoffmann."),
  a("2025-06-03", "nebenkosten", "Die Nebenkostenabrechnung 2024 kam heute: Nachzahlung von 240 Euro bis Ende Juni."),
  a("2025-05-28", "steuer", "Steuererklärung 2024 mit Elster abgegeben, die Belege liegen im grünen Ordner."),
  a("2025-08-02", "besichtigung", "Wohnung in der Hafenstraße besichtigt: drei Zimmer, Balkon, Einbauküche."),
  a("2025-04-12", "schwimmkurs", "Mias Schwimmkurs ist samstags um 10 Uhr im Hallenbad Ost."),
  a("2025-08-30", "hausrat", "Hausratversicherung bei der Allianz zum 30. September gekündigt."),
  a("2024-10-26", "reifen", "Reifenwechsel beim Autohaus Nord erledigt, die Winterreifen werden dort eingelagert."),
  a("2025-09-15", "elternabend", "Der Elternabend in der Grundschule ist am Donnerstag um 19 Uhr in Raum 12."),
  a("2025-10-15", "biotonne", "Die Biotonne wird jeden zweiten Mittwoch geleert, Papiertonne freitags."),
  a("2025-09-22", "ersatzschluessel", "Der Ersatzschlüssel liegt bei Familie Becker im zweiten Stock."),
  a("2025-03-11", "geschenk-papa", "Geburtstagsgeschenk für Papa: zwei Bücher übers Segeln und eine Karte."),
  a("2025-10-30", "heizung", "Die Heizung im Bad tropft; Hausmeister Herr Yilmaz ist informiert und kommt Montag."),
  a("2025-11-12", "krankmeldung", "Krankmeldung für Tessaro bis Freitag eingereicht, per Mail an die Personalabteilung."),

  // ---- typos, inflection, natural questions, paraphrase targets --------------------------------
  a("2025-11-19", "dentist-bill", "Paid the dentist bill of 180 euros for the crown at Elbdental."),
  a("2025-10-27", "plumber", "The plumber, Mr Kowalski, fixes the bathroom sink on Wednesday; phone 040 555 218."),
  a("2025-01-20", "passport-renewal", "Passport renewal appointment at the Bürgeramt on 12 February, bring a biometric photo."),
  a("2024-03-18", "insurance-number", "Health insurance number (TK): A123456789, card expires 2028."),
  a("2024-04-10", "vaccination", "Mia's measles vaccination done today at Dr. Brandt, next booster at age six."),
  a("2025-10-05", "babysitter", "Babysitter Jonas: 0176 4455 6677, 14 euros an hour, free on weekday evenings."),
  a("2025-01-01", "meter-2025", "Electricity meter reading on 1 January: 51877 kWh."),
  a("2024-01-01", "meter-2024", "Electricity meter reading on 1 January: 48213 kWh."),
  a("2024-09-02", "laptop-receipt", "Laptop receipt and warranty card are in the blue folder; bought at MediaMarkt."),
  a("2025-09-21", "landlord", "Landlord is Mr Petersen, email petersen@hafenweg-immo.de, reply within a week."),
  a("2025-06-15", "bicycle-lock", "Bicycle lock code is 3917, the spare lock is in the basement."),
  a("2025-05-04", "running", "Ran 10 km along the Elbe in the new shoes, no blisters."),
  a("2025-03-03", "architect", "Met the architect about the kitchen plans; next meeting on 3 March."),
  a("2024-10-08", "flowers", "Buying flowers for Anna's birthday: peonies from the market stall."),
  a("2025-04-30", "tax-payment", "Tax payment of 1,200 euros due on 10 June for the side business."),
  a("2024-12-12", "lease", "Lease renewal signed for two more years at Lindenstraße."),
  a("2025-02-20", "newspaper", "Cancel the newspaper subscription before April; notice by letter."),
  a("2025-07-19", "roof", "Roof repair quote: 3,400 euros from Dachbau Lüders, work in August."),
  a("2025-04-13", "swimming-en", "Mia's swimming lesson is on Saturday at 10 at Hallenbad Ost; bring goggles."),
  a("2025-09-23", "spare-key", "Spare key is with the Beckers on the second floor, flat 4B."),
  a("2025-09-26", "boiler", "Boiler installed in 2012, serviced every autumn by Thermo Nord."),
  a("2023-08-14", "passport-expiry", "My passport expires on 14 August 2027."),
  a("2025-09-12", "teacher", "Mia's teacher at Grundschule am Hafen is Ms Lindqvist."),
  a("2025-10-10", "dog", "The neighbours' dog is called Bruno, a friendly beagle."),
  a("2025-09-30", "storage", "The apartment has a storage room in the basement, number 14."),
  a("2025-08-22", "childcare-evenings", "Evenings when we are out, the kids are looked after by Jonas."),
  a("2024-06-20", "paediatric-check", "Mia's paediatrician recommended the U9 check-up before school."),

  // ---- near-duplicate distractors around one answer --------------------------------------------
  a("2025-03-25", "parking-permit", "Residential parking permit for zone 4: number P-22817, valid until March 2027."),
  a("2025-03-26", "parking-office", "Parking at the office costs 5 euros a day, the garage closes at 22:00."),
  a("2024-11-05", "parking-ticket", "Parking ticket paid, 25 euros, for the car at the station."),
  a("2024-05-02", "anna-birthday", "Anna's birthday is on 9 October."),
  a("2024-09-30", "anna-mother-birthday", "Bought a birthday present for Anna's mother: a silk scarf."),
  a("2025-02-11", "anna-colleague-birthday", "Signed the birthday card for Anna's colleague Marta at the office."),
  a("2024-05-19", "shoe-size-mia", "Mia's shoe size is 31 now."),
  a("2024-05-20", "shoe-size-me", "My shoe size is 44, Anna's is 39."),
  a("2024-02-28", "tax-id", "My tax ID is 12 345 678 901."),
  a("2024-02-29", "tax-id-anna", "Anna's tax ID letter is in the blue folder, not copied yet."),
  a("2026-03-01", "flight-lisbon", "Flight to Lisbon on 14 April, TP 503 at 06:40 from Hamburg."),
  a("2025-04-18", "flight-porto", "Last year's flight to Porto was delayed three hours; claim filed."),
  a("2026-03-02", "hotel-lisbon", "Lisbon hotel booked near Alfama for four nights."),

  // ---- another user's notes: similar words, never A's answer -----------------------------------
  b("2025-10-01", "b-address", "My home address is Birkenweg 9, 80331 Munich."),
  b("2025-10-02", "b-dentist", "My dentist is Dr. Krause; dentist bill of 90 euros paid."),
  b("2025-10-03", "b-wifi", "Wifi password is sunflower-88."),
  b("2025-10-04", "b-manager", "My manager is Sofia Brandt, and my mobile number is 0171 222 3333."),
  b("2025-10-05", "b-kita", "Kita-Gutschein für Leon verlängert, Abholung durch Papa."),
  b("2025-10-06", "b-plumber", "The plumber fixed the sink; plumber bill 120 euros."),
]
