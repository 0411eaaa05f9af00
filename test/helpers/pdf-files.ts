import { deflateSync } from 'node:zlib';

const latin1 = (text: string) => Buffer.from(text, 'latin1');

/** A one-page PDF written by hand, with this text and title. */
export function tinyPdf(text: string, title: string): Uint8Array {
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Title (${title}) >>`,
  ].map(latin1), '/Info 6 0 R');
}

/** A one-page PDF of a few hundred KB whose content stream inflates to `inflatedMb` MB of spaces. */
export function inflatingPdf(inflatedMb: number): Uint8Array {
  const stream = deflateSync(Buffer.alloc(inflatedMb * 1024 * 1024, 0x20), { level: 9 });
  return pdfOf([
    latin1('<< /Type /Catalog /Pages 2 0 R >>'),
    latin1('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    latin1('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>'),
    Buffer.concat([latin1(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, latin1('\nendstream')]),
  ], '');
}

/** The objects (numbered from 1, the first the catalog), then a cross-reference table of their byte offsets. */
function pdfOf(objects: Buffer[], trailer: string): Uint8Array {
  const parts = [latin1('%PDF-1.4\n')];
  let length = parts[0].length;
  const offsets = objects.map((object, index) => {
    const offset = length;
    const part = Buffer.concat([latin1(`${index + 1} 0 obj\n`), object, latin1('\nendobj\n')]);
    parts.push(part);
    length += part.length;
    return offset;
  });
  const table = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(latin1(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${table}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailer}>>\nstartxref\n${length}\n%%EOF\n`));
  return new Uint8Array(Buffer.concat(parts));
}
