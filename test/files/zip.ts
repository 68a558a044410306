import { crc32 } from "node:zlib"

/** One entry of a zip: its bytes as stored (compressed when `method` is 8), the size it claims
 *  unpacked, and how many times the directory names it (more than once: an overlapping bomb). */
export interface ZipEntry {
  name: string
  stored: Buffer
  method?: 0 | 8
  size?: number
  crc?: number
  listed?: number
}

/** A zip archive of `entries`, its directory written as they say (which may lie). */
export function zipOf(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  let listed = 0
  for (const { name, stored, method = 0, size = stored.length, crc = method === 0 ? crc32(stored) : 0, listed: times = 1 } of entries) {
    const nameBytes = Buffer.from(name)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(stored.length, 18)
    local.writeUInt32LE(size, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    for (let copy = 0; copy < times; copy++) {
      const copyName = copy === 0 ? nameBytes : Buffer.from(`${name}.${copy}`)
      const central = Buffer.alloc(46)
      central.writeUInt32LE(0x02014b50, 0)
      central.writeUInt16LE(20, 4)
      central.writeUInt16LE(20, 6)
      central.writeUInt16LE(method, 10)
      central.writeUInt32LE(crc, 16)
      central.writeUInt32LE(stored.length, 20)
      central.writeUInt32LE(size, 24)
      central.writeUInt16LE(copyName.length, 28)
      central.writeUInt32LE(offset, 42)
      centrals.push(central, copyName)
    }
    listed += times
    locals.push(local, nameBytes, stored)
    offset += local.length + nameBytes.length + stored.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(Math.min(listed, 0xffff), 8)
  end.writeUInt16LE(Math.min(listed, 0xffff), 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

/** A zip archive of `files`, stored without compression: enough to build a .docx in a test. */
export function storedZip(files: Record<string, string>): Buffer {
  return zipOf(Object.entries(files).map(([name, text]) => ({ name, stored: Buffer.from(text) })))
}

/** A two-page PDF with one line of text per page, its cross-reference table computed. */
export function twoPagePdf(first: string, second: string): Buffer {
  const stream = (text: string) => `BT /F1 12 Tf 20 200 Td (${text}) Tj ET`
  const objects = [
    "<</Type/Catalog/Pages 2 0 R>>",
    "<</Type/Pages/Kids[3 0 R 5 0 R]/Count 2>>",
    "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 300]/Contents 4 0 R/Resources<</Font<</F1 6 0 R>>>>>>",
    `<</Length ${stream(first).length}>>stream\n${stream(first)}\nendstream`,
    "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 300]/Contents 7 0 R/Resources<</Font<</F1 6 0 R>>>>>>",
    "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
    `<</Length ${stream(second).length}>>stream\n${stream(second)}\nendstream`,
  ]
  let body = "%PDF-1.4\n"
  const offsets: number[] = []
  objects.forEach((object, index) => {
    offsets.push(body.length)
    body += `${index + 1} 0 obj${object}endobj\n`
  })
  const xref = body.length
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`
  body += `trailer<</Size ${objects.length + 1}/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF`
  return Buffer.from(body, "latin1")
}
