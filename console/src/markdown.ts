import DOMPurify from 'dompurify';
import { Marked, type TokenizerAndRendererExtension, type Tokens } from 'marked';

/** A source a research answer cites: its `[n]` markers point to `citations[n - 1]` (spec 2.6). */
export interface Citation { url: string; title?: string }

/**
 * `[1]`, `[1, 2]`, `[1-3]` as the research workflow writes them (src/workflows/modes/research/citations/cited-report.ts):
 * not a link's text (`[1](…)`) nor a reference definition (`[1]: …`); `[1][2]` is two markers.
 */
const MARKER = /^\[(\d{1,3}(?:\s*[-–]\s*\d{1,3})?(?:\s*,\s*\d{1,3}(?:\s*[-–]\s*\d{1,3})?)*)\](?![(:])/;

/**
 * Markdown from a model is untrusted: marked renders it and DOMPurify strips anything executable. Style
 * attributes go too (the CSP refuses inline styles), and links open safely in a new tab. With citations,
 * each `[n]` marker becomes a link to its source (markers in code stay text).
 */
export function renderMarkdown(text: string, citations: readonly Citation[] = []): string {
  const html = parser(citations).parse(text, { async: false }) as string;
  return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: ['style', 'form', 'input'] });
}

const plain = new Marked({ gfm: true, breaks: false });

function parser(citations: readonly Citation[]): Marked {
  return citations.length === 0 ? plain : new Marked({ gfm: true, breaks: false, extensions: [citationMarkers(citations)] });
}

function citationMarkers(citations: readonly Citation[]): TokenizerAndRendererExtension {
  return {
    name: 'citation',
    level: 'inline',
    start: (source: string) => source.search(/\[\d/),
    tokenizer(source: string) {
      const match = MARKER.exec(source);
      if (!match) return undefined;
      const numbers = expand(match[1]);
      if (numbers.length === 0 || numbers.some((number) => !citations[number - 1])) return undefined;
      return { type: 'citation', raw: match[0], numbers };
    },
    renderer(token: Tokens.Generic) {
      const links = (token.numbers as number[]).map((number) => {
        const source = citations[number - 1];
        return `<a class="citation" href="${escapeHtml(source.url)}" title="${escapeHtml(source.title || source.url)}" data-citation="${number}">${number}</a>`;
      });
      return `<sup class="citations">[${links.join(', ')}]</sup>`;
    },
  };
}

/** `1, 3-5` → [1, 3, 4, 5]; a range of more than 50 is not a citation. */
function expand(list: string): number[] {
  const numbers: number[] = [];
  for (const part of list.split(',')) {
    const [first, last = first] = part.split(/[-–]/).map((value) => Number(value.trim()));
    if (last < first || last - first > 50) return [];
    for (let number = first; number <= last; number++) numbers.push(number);
  }
  return numbers;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
