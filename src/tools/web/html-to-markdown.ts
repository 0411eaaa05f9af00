import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { absoluteUrl, followableLink } from './page-links.ts';

export interface ReadablePage {
  title: string;
  /** The main content as Markdown; the whole body when no main content stands out. */
  markdown: string;
  /** Every http(s) link of the page (navigation included), absolute, without fragment, each once. */
  links: string[];
}

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'title']);

/** Readable Markdown of an HTML page: its article (Readability), not its navigation, with absolute links. */
export function htmlToMarkdown(html: string, pageUrl: string): ReadablePage {
  const document = parseDocument(html);
  const base = baseUrlOf(document, pageUrl);
  absolutize(document, base);
  const links = linksOf(document, base);
  const documentTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  const bodyHtml = document.body.innerHTML;
  // Readability takes the document apart as it reads it: links and the fallback body are taken first.
  const article = new Readability(document as unknown as Document).parse();
  const hasArticle = article !== null && (article.textContent ?? '').trim() !== '';
  const markdown = turndown.turndown(hasArticle ? article.content ?? '' : bodyHtml).trim();
  return { title: (hasArticle && article.title?.trim()) || documentTitle, markdown, links };
}

/**
 * Browsers imply <html>, <head> and <body> where a page leaves them out; linkedom does not: what it leaves
 * outside them is moved into the body (its `body` getter adds a missing head and body).
 */
function parseDocument(html: string): ParsedDocument {
  let { document } = parseHTML(html);
  if (document.documentElement?.localName !== 'html') ({ document } = parseHTML(`<html>${html}</html>`));
  const stray = [...document.documentElement.childNodes].filter(isStray);
  const { body } = document;
  for (const node of stray) body.appendChild(node);
  return document;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

function isStray(node: { nodeType: number; localName?: string; textContent: string | null }): boolean {
  if (node.nodeType === ELEMENT_NODE) return node.localName !== 'head' && node.localName !== 'body';
  return node.nodeType === TEXT_NODE && (node.textContent ?? '').trim() !== '';
}

function baseUrlOf(document: ParsedDocument, pageUrl: string): string {
  const href = document.querySelector('base[href]')?.getAttribute('href');
  return (href && absoluteUrl(href, pageUrl)) || pageUrl;
}

function absolutize(document: ParsedDocument, base: string): void {
  for (const [selector, attribute] of [['a[href]', 'href'], ['img[src]', 'src']] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const absolute = absoluteUrl(element.getAttribute(attribute)!, base);
      if (absolute) element.setAttribute(attribute, absolute);
    }
  }
}

function linksOf(document: ParsedDocument, base: string): string[] {
  const links = new Set<string>();
  for (const anchor of document.querySelectorAll('a[href]')) {
    const link = followableLink(anchor.getAttribute('href')!, base);
    if (link) links.add(link);
  }
  return [...links];
}

type ParsedDocument = ReturnType<typeof parseHTML>['document'];
