import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHTML } from 'linkedom';
import { deepArticlePage, nestedPage, widePage } from '../../../../bench/parse/pages.ts';
import { measureHtml } from '../../../../src/tools/web/html-shape.ts';
import { htmlToText } from '../../../../src/tools/web/html-to-text.ts';
import { MAX_ARTICLE_DEPTH, MAX_ARTICLE_ELEMENTS, MAX_DEPTH, readHtml } from '../../../../src/tools/web/read-html.ts';

const PAGE_URL = 'https://site.test/articles/nile';

/** Depth and element count of the tree linkedom builds. */
function treeShape(html: string) {
  const walk = (node: { children?: ArrayLike<unknown> }, depth: number): { depth: number; elements: number } => {
    let shape = { depth, elements: 0 };
    for (const child of Array.from(node.children ?? []) as Array<{ children?: ArrayLike<unknown> }>) {
      const below = walk(child, depth + 1);
      shape = { depth: Math.max(shape.depth, below.depth), elements: shape.elements + 1 + below.elements };
    }
    return shape;
  };
  return walk(parseHTML(html).document, 0);
}

describe('the shape pre-scan', () => {
  it('finds the depth and element count of the tree linkedom builds, implied and void elements included', () => {
    const pages = [
      '<html><body><div><p>a<p>b<br><img src=x><ul><li>x<li>y</ul></div></body></html>',
      '<div><div><span>never closed',
      '<p><div></p></div><table><tr><td>a<td>b</table><svg><g><path/></g></svg>',
      deepArticlePage(20, 5),
    ];
    for (const html of pages) assert.deepEqual(measureHtml(html, 1_000), treeShape(html), html);
  });

  it('stops one element past the depth limit, however deep the page goes', () => {
    assert.deepEqual(measureHtml(nestedPage(100_000), 50), { depth: 51, elements: 51 });
  });
});

describe('reading HTML', () => {
  it('an ordinary page is read as Markdown of its article', () => {
    const page = readHtml(deepArticlePage(10, 5), PAGE_URL);
    assert.equal(page.title, 'Deltas');
    assert.match(page.markdown, /^Rivers carry sediment/);
    assert.match(page.markdown, /\[note 0\]\(https:\/\/site\.test\/notes\/0\)/);
    assert.equal(page.notice, undefined);
  });

  it('offers its plain text before the article reader starts (the answer if that reader is stopped), and only then', () => {
    const offered: string[] = [];
    readHtml(deepArticlePage(10, 5), PAGE_URL, (page) => offered.push(page.markdown));
    assert.equal(offered.length, 1);
    assert.match(offered[0], /^Deltas\n\nRivers carry sediment/);
    readHtml(widePage(MAX_ARTICLE_ELEMENTS + 100), PAGE_URL, (page) => offered.push(page.markdown));
    assert.equal(offered.length, 1, 'a page read as plain text anyway offers nothing');
  });

  it(`a page nested deeper than ${MAX_DEPTH} is not read, and says why`, () => {
    for (const depth of [MAX_DEPTH + 1, 100_000]) {
      assert.throws(() => readHtml(nestedPage(depth), PAGE_URL), {
        message: `the page is nested more than ${MAX_DEPTH} elements deep; pages nested deeper than ${MAX_DEPTH} are not read`,
      });
    }
  });

  it(`a page nested deeper than ${MAX_ARTICLE_DEPTH} is read as plain text, saying so`, () => {
    const page = readHtml(deepArticlePage(MAX_ARTICLE_DEPTH, 3), PAGE_URL);
    assert.equal(page.notice, `read as plain text: it is nested ${MAX_ARTICLE_DEPTH + 5} elements deep, more than the ${MAX_ARTICLE_DEPTH} the article reader takes`);
    assert.match(page.markdown, /^Deltas\n\nRivers carry sediment/);
    assert.deepEqual(page.links, ['https://site.test/notes/0', 'https://site.test/notes/1', 'https://site.test/notes/2']);
  });

  it(`a page of more than ${MAX_ARTICLE_ELEMENTS} elements is read as plain text, saying so`, () => {
    const page = readHtml(widePage(MAX_ARTICLE_ELEMENTS + 100), PAGE_URL);
    assert.match(page.notice!, new RegExp(`^read as plain text: it has \\d+ elements, more than the ${MAX_ARTICLE_ELEMENTS} the article reader takes$`));
    assert.equal(page.title, 'Long page');
    assert.match(page.markdown, /^Section 0\n\nSection 1\n/);
    assert.ok(page.links.includes('https://site.test/p/0'));
  });
});

describe('the plain-text reading', () => {
  it('keeps the title, the visible text a block to a line and the links, and drops scripts, styles and the head', () => {
    const html = `<html><head><title> The   Nile </title><base href="https://other.test/dir/"><style>p { color: red }</style></head>
      <body><nav><a href="/home#top">Home</a> | <a href="rivers">Rivers</a> <a href="mailto:a@b.test">mail</a></nav>
      <p>Hello &amp; <b>welcome</b>.</p><script>track()</script><noscript>enable scripts</noscript><ul><li>one<li>two</ul></body></html>`;
    assert.deepEqual(htmlToText(html, PAGE_URL), {
      title: 'The Nile',
      markdown: 'Home | Rivers mail\n\nHello & welcome.\n\none\n\ntwo',
      links: ['https://other.test/home', 'https://other.test/dir/rivers'],
    });
  });
});
