import DOMPurify from 'dompurify';
import { marked } from 'marked';

/**
 * Markdown from a model is untrusted: marked renders it and DOMPurify strips anything executable. Style
 * attributes go too (the CSP refuses inline styles), and links open safely in a new tab.
 */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: false });
  return DOMPurify.sanitize(html, { FORBID_ATTR: ['style'], FORBID_TAGS: ['style', 'form', 'input'] });
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});
