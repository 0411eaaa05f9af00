import { Parser } from 'htmlparser2';
import { followableLink } from './page-links.ts';
import type { ReadablePage } from './html-to-markdown.ts';

/** Elements whose content is not read text (the ones the Markdown reading removes too). */
const UNREAD = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'head', 'svg', 'math', 'select']);
/** Elements that start a new line of text. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'details', 'div', 'dl', 'dt', 'figcaption', 'figure', 'footer',
  'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary',
  'table', 'td', 'th', 'tr', 'ul',
]);

/**
 * The text of a page in one linear pass of the tokenizer, with no tree: its title, its visible text a block to a
 * line, and its links. The reading of a page too deep or too large for Readability to read in bounded time.
 */
export function htmlToText(html: string, pageUrl: string): ReadablePage {
  const text: string[] = [];
  const links = new Set<string>();
  let title = '';
  let base = pageUrl;
  let unreadDepth = 0;
  let inTitle = false;
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name === 'base' && attributes.href && base === pageUrl) base = URL.parse(attributes.href.trim(), pageUrl)?.toString() ?? base;
      if (name === 'a' && attributes.href) {
        const link = followableLink(attributes.href, base);
        if (link) links.add(link);
      }
      if (name === 'title' && title === '') inTitle = true;
      if (UNREAD.has(name)) unreadDepth += 1;
      if (BLOCKS.has(name)) text.push('\n');
    },
    onclosetag(name) {
      if (name === 'title') inTitle = false;
      if (UNREAD.has(name)) unreadDepth -= 1;
      if (BLOCKS.has(name)) text.push('\n');
    },
    ontext(data) {
      if (inTitle) title += data;
      else if (unreadDepth === 0) text.push(data);
    },
  }, { decodeEntities: true });
  parser.end(html);
  return { title: collapseSpaces(title), markdown: linesOf(text.join('')), links: [...links] };
}

const collapseSpaces = (line: string) => line.replace(/\s+/g, ' ').trim();

function linesOf(text: string): string {
  return text.split('\n').map(collapseSpaces).filter(Boolean).join('\n\n');
}
