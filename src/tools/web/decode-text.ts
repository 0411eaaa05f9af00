import { MIMEType } from 'node:util';
import { parseHTML } from 'linkedom';

/** The HTML standard looks for a `<meta charset>` in the first 1024 bytes only. */
const META_PRESCAN_BYTES = 1024;

const BYTE_ORDER_MARKS: Array<[number[], string]> = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

/**
 * A response body as text, in the encoding its byte order mark, its Content-Type charset, or (for HTML) its
 * `<meta charset>` names, in that order; UTF-8 when none does or the name is unknown.
 */
export function decodeText(bytes: Uint8Array, contentType: string | undefined, isHtml: boolean): string {
  const label = byteOrderMarkOf(bytes) ?? charsetOf(contentType) ?? (isHtml ? metaCharsetOf(bytes) : undefined);
  return decoderFor(label).decode(bytes);
}

/** The parsed Content-Type, or undefined when there is none or it does not parse. */
export function mimeTypeOf(contentType: string | undefined): MIMEType | undefined {
  if (!contentType) return undefined;
  try {
    return new MIMEType(contentType);
  } catch {
    return undefined;
  }
}

const charsetOf = (contentType: string | undefined) => mimeTypeOf(contentType)?.params.get('charset') ?? undefined;

function byteOrderMarkOf(bytes: Uint8Array): string | undefined {
  return BYTE_ORDER_MARKS.find(([mark]) => mark.every((byte, index) => bytes[index] === byte))?.[1];
}

/** `<meta charset="…">`, or `<meta http-equiv="Content-Type" content="text/html; charset=…">`. */
function metaCharsetOf(bytes: Uint8Array): string | undefined {
  // Any ASCII-compatible reading finds the tag; windows-1252 never fails on a byte.
  const head = new TextDecoder('windows-1252').decode(bytes.subarray(0, META_PRESCAN_BYTES));
  const { document } = parseHTML(head);
  for (const meta of document.querySelectorAll('meta')) {
    const charset = meta.getAttribute('charset');
    if (charset) return charset.trim();
    if (meta.getAttribute('http-equiv')?.toLowerCase() === 'content-type') {
      const declared = charsetOf(meta.getAttribute('content') ?? undefined);
      if (declared) return declared;
    }
  }
  return undefined;
}

function decoderFor(label: string | undefined): TextDecoder {
  try {
    return new TextDecoder(label ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}
