import { once } from "node:events"
import { createDeflate, createDeflateRaw, createGzip } from "node:zlib"
import { zipOf, type ZipEntry } from "./zip.ts"

const FORMATS = { raw: createDeflateRaw, zlib: createDeflate, gzip: createGzip }

/** `bytes` of `fill`, deflated as they stream (never held whole): a megabyte per kilobyte or so;
 *  raw deflate (as in a zip), zlib (a PDF's FlateDecode, HTTP's deflate) or gzip. */
export async function deflatedZeros(bytes: number, { format = "raw", fill = 0 }: { format?: keyof typeof FORMATS; fill?: number } = {}): Promise<Buffer> {
  const deflate = FORMATS[format]({ level: 9 })
  const chunks: Buffer[] = []
  deflate.on("data", (chunk: Buffer) => chunks.push(chunk))
  const zeros = Buffer.alloc(1024 * 1024, fill)
  for (let left = bytes; left > 0; left -= zeros.length) {
    if (!deflate.write(left >= zeros.length ? zeros : zeros.subarray(0, left))) await once(deflate, "drain")
  }
  deflate.end()
  await once(deflate, "end")
  return Buffer.concat(chunks)
}

const CONTENT_TYPES =
  '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
const RELS =
  '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'

/** A .docx whose document part is `document`, beside the two parts every docx has. */
export function docxWith(document: Omit<ZipEntry, "name">, extra: ZipEntry[] = []): Buffer {
  return zipOf([{ name: "[Content_Types].xml", stored: Buffer.from(CONTENT_TYPES) }, { name: "_rels/.rels", stored: Buffer.from(RELS) }, { name: "word/document.xml", ...document }, ...extra])
}

/** The zip bombs a docx can be, each small on disk: one entry that inflates to `bytes` (its size
 *  declared honestly, or as a lie), one block of a megabyte named by many entries (overlap), and
 *  thousands of empty entries. */
export async function docxBombs(bytes: number): Promise<Record<string, Buffer>> {
  const zeros = await deflatedZeros(bytes)
  const megabyte = await deflatedZeros(1024 * 1024)
  return {
    "one huge part": docxWith({ stored: zeros, method: 8, size: bytes }),
    "one huge part claiming 1 KB": docxWith({ stored: zeros, method: 8, size: 1024 }),
    "one block named by many entries": docxWith({ stored: megabyte, method: 8, size: 1024 * 1024, listed: Math.ceil(bytes / (1024 * 1024)) }),
    "thousands of entries": docxWith({ stored: Buffer.from("<w:document/>") }, Array.from({ length: 3000 }, (_, index) => ({ name: `word/media/${index}.xml`, stored: Buffer.alloc(0) }))),
  }
}

/** A one-page PDF whose content stream inflates to `bytes` of zeros (FlateDecode). */
export async function pdfBomb(bytes: number): Promise<Buffer> {
  const stream = await deflatedZeros(bytes, { format: "zlib" })
  const head = [
    "<</Type/Catalog/Pages 2 0 R>>",
    "<</Type/Pages/Kids[3 0 R]/Count 1>>",
    "<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 300]/Contents 4 0 R>>",
  ]
  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n", "latin1")]
  const offsets: number[] = []
  let length = parts[0]!.length
  const add = (piece: Buffer) => {
    parts.push(piece)
    length += piece.length
  }
  head.forEach((object, index) => {
    offsets.push(length)
    add(Buffer.from(`${index + 1} 0 obj${object}endobj\n`, "latin1"))
  })
  offsets.push(length)
  add(Buffer.from(`4 0 obj<</Length ${stream.length}/Filter/FlateDecode>>stream\n`, "latin1"))
  add(stream)
  add(Buffer.from("\nendstream endobj\n", "latin1"))
  const xref = length
  add(Buffer.from(`xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}trailer<</Size 5/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF`, "latin1"))
  return Buffer.concat(parts)
}
