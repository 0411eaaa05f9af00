import { decodeText, mimeTypeOf } from './decode-text.ts';
import { pdfToText } from './pdf-to-text.ts';
import { readHtml, type HtmlReading } from './read-html.ts';

export interface ExtractedContent {
  title: string;
  content: string;
  /** The page's links (HTML only), for a crawl to follow. */
  links: string[];
  /** How the reading departed from the usual one (an HTML page read as plain text), and why. */
  notice?: string;
}

export interface Body {
  url: string;
  contentType: string | undefined;
  bytes: Uint8Array;
  /** Cut at the size cap: a PDF cut short cannot be read. */
  isTruncated: boolean;
}

type ContentKind = 'html' | 'pdf' | 'text';

const TEXT_TYPES = new Set(['application/json', 'application/xml', 'application/javascript', 'application/x-ndjson', 'application/yaml']);

/**
 * HTML → readable Markdown, PDF → text, plain text and JSON as they are; anything else is refused. It parses
 * untrusted bytes, so it runs in a parse worker (parse-worker.ts), never on the gateway's event loop. For an
 * HTML page read as an article, `offerFallback` gets its plain text first (see readHtml).
 */
export async function extractContent(body: Body, offerFallback?: (content: ExtractedContent) => void): Promise<ExtractedContent> {
  const kind = contentKindOf(body);
  if (kind === 'pdf') {
    if (body.isTruncated) throw new Error('the PDF is larger than TOOLS_FETCH_MAX_BYTES: it cannot be read in part');
    const { title, text } = await pdfToText(body.bytes);
    return { title, content: text, links: [] };
  }
  const text = decodeText(body.bytes, body.contentType, kind === 'html');
  if (kind === 'text') return { title: '', content: text, links: [] };
  return contentOf(readHtml(text, body.url, offerFallback && ((page) => offerFallback(contentOf(page)))));
}

const contentOf = (page: HtmlReading): ExtractedContent =>
  ({ title: page.title, content: page.markdown, links: page.links, ...(page.notice && { notice: page.notice }) });

function contentKindOf({ contentType, bytes }: Body): ContentKind {
  const essence = mimeTypeOf(contentType)?.essence;
  if (essence === undefined || essence === 'application/octet-stream') return sniffedKindOf(bytes, contentType);
  if (essence === 'text/html' || essence === 'application/xhtml+xml') return 'html';
  if (essence === 'application/pdf') return 'pdf';
  if (essence.startsWith('text/') || TEXT_TYPES.has(essence) || /\+(json|xml)$/.test(essence)) return 'text';
  throw new Error(`cannot read content of type ${essence}`);
}

/** For a server that does not say (or says octet-stream): the signatures the MIME sniffing standard starts with. */
function sniffedKindOf(bytes: Uint8Array, contentType: string | undefined): ContentKind {
  const start = new TextDecoder('windows-1252').decode(bytes.subarray(0, 512));
  if (start.startsWith('%PDF-')) return 'pdf';
  if (/^\s*<(!doctype html|html|head|body)[\s>]/i.test(start)) return 'html';
  if (!start.includes('\u0000')) return 'text';
  throw new Error(`cannot read content of type ${contentType ?? 'unknown'} (binary)`);
}
