import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractContent, type Body } from '../../../../src/tools/web/extract-content.ts';
import { tinyPdf } from '../../../helpers/pdf-files.ts';

const PAGE_URL = 'https://site.test/articles/nile';

const ARTICLE_HTML = `<!doctype html><html><head><title>The Nile | Rivers</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li><li><a href="https://other.test/x#top">Elsewhere</a></li></ul></nav>
<article>
  <h1>The Nile</h1>
  <h2>Course</h2>
  <p>The Nile is a major north-flowing river in northeastern Africa. It flows into the Mediterranean Sea and is about
  6,650 km long, which makes it one of the two longest rivers in the world together with the Amazon.</p>
  <p>Its drainage basin covers eleven countries. The White Nile and the Blue Nile are its two major tributaries and they
  meet near Khartoum, the capital of Sudan, before the river continues north through Egypt.</p>
  <ul><li>Length: about 6,650 km</li><li>Mouth: the Mediterranean Sea</li></ul>
  <p>Read on about <a href="amazon">the Amazon</a>.</p>
</article>
<footer>Copyright and cookie notices</footer>
<script>trackEverything()</script>
</body></html>`;

const body = (bytes: Uint8Array | string, contentType: string | undefined, isTruncated = false): Body =>
  ({ url: PAGE_URL, contentType, bytes: typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes, isTruncated });

describe('HTML', () => {
  it('becomes Markdown of the article, without navigation, footer or scripts, with absolute links', async () => {
    const { title, content, links } = await extractContent(body(ARTICLE_HTML, 'text/html'));
    // Readability drops the heading that repeats the title.
    assert.equal(title, 'The Nile | Rivers');
    assert.match(content, /^## Course\n\nThe Nile is a major north-flowing river/);
    assert.match(content, /^-\s+Length: about 6,650 km$/m);
    assert.match(content, /\[the Amazon\]\(https:\/\/site\.test\/articles\/amazon\)/);
    assert.doesNotMatch(content, /About us|Copyright|trackEverything/);
    assert.deepEqual(links, ['https://site.test/', 'https://site.test/about', 'https://other.test/x', 'https://site.test/articles/amazon']);
  });

  it('a page without a main article falls back to its whole body', async () => {
    const { title, content } = await extractContent(body('<html><head><title>Tiny</title></head><body><p>Just <b>one</b> line.</p></body></html>', 'text/html'));
    assert.equal(title, 'Tiny');
    assert.equal(content, 'Just **one** line.');
  });

  it('a page that leaves out <html>, <head> or <body> is read as a browser reads it', async () => {
    const read = async (html: string) => {
      const { title, content } = await extractContent(body(html, 'text/html'));
      return [title, content];
    };
    assert.deepEqual(await read('<!doctype html><title>Short</title><p>No <i>tags</i> around me.</p>'), ['Short', 'No _tags_ around me.']);
    assert.deepEqual(await read('<html><head><title>Half</title></head><p>No body tag.</p></html>'), ['Half', 'No body tag.']);
    assert.deepEqual(await read('<p>A fragment with <a href="/x">a link</a>.</p>'), ['', 'A fragment with [a link](https://site.test/x).']);
    assert.deepEqual(await read(''), ['', '']);
  });

  it('with no Content-Type, an HTML document is recognised by its start', async () => {
    const { content } = await extractContent(body('<!DOCTYPE html><html><body><p>sniffed</p></body></html>', undefined));
    assert.equal(content, 'sniffed');
  });
});

describe('charsets', () => {
  const latin1 = (text: string) => Uint8Array.from(text, (character) => character.charCodeAt(0));

  it('the Content-Type charset decodes the body', async () => {
    const { content } = await extractContent(body(latin1('Caf\u00e9 cr\u00e8me'), 'text/plain; charset=ISO-8859-1'));
    assert.equal(content, 'Café crème');
  });

  it('without one, <meta charset> decides for HTML', async () => {
    const html = latin1('<html><head><meta charset="windows-1252"><title>R\u00e9sum\u00e9</title></head><body><p>na\u00efve fa\u00e7ade</p></body></html>');
    const { title, content } = await extractContent(body(html, 'text/html'));
    assert.equal(title, 'Résumé');
    assert.equal(content, 'naïve façade');
  });

  it('and so does <meta http-equiv="Content-Type">, here for a Cyrillic page', async () => {
    const word = new Uint8Array([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]); // "Привет" in windows-1251
    const html = new Uint8Array([
      ...new TextEncoder().encode('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"></head><body><p>'),
      ...word, ...new TextEncoder().encode('</p></body></html>'),
    ]);
    assert.equal((await extractContent(body(html, 'text/html'))).content, 'Привет');
  });

  it('a byte order mark wins over a wrong header, and UTF-8 is the default', async () => {
    const withMark = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('naïve')]);
    assert.equal((await extractContent(body(withMark, 'text/plain; charset=iso-8859-1'))).content, 'naïve');
    assert.equal((await extractContent(body('naïve ✓', 'text/plain'))).content, 'naïve ✓');
    assert.equal((await extractContent(body('naïve', 'text/plain; charset=no-such-charset'))).content, 'naïve');
  });
});

describe('PDF', () => {
  it('becomes its text, titled from its metadata', async () => {
    const { title, content, links } = await extractContent(body(tinyPdf('Rivers carry sediment to the sea', 'A tiny report'), 'application/pdf'));
    assert.equal(title, 'A tiny report');
    assert.equal(content, 'Rivers carry sediment to the sea');
    assert.deepEqual(links, []);
  });

  it('is recognised by its signature when served as octet-stream', async () => {
    const { content } = await extractContent(body(tinyPdf('sniffed pdf', 'x'), 'application/octet-stream'));
    assert.equal(content, 'sniffed pdf');
  });

  it('cut at the size cap is refused rather than read in part', async () => {
    await assert.rejects(extractContent(body(tinyPdf('cut', 'x').subarray(0, 100), 'application/pdf', true)), { message: /larger than TOOLS_FETCH_MAX_BYTES/ });
  });
});

describe('other types', () => {
  it('JSON and plain text come back as they are', async () => {
    assert.equal((await extractContent(body('{"a": [1, 2]}', 'application/json'))).content, '{"a": [1, 2]}');
    assert.equal((await extractContent(body('{"b": 1}', 'application/ld+json'))).content, '{"b": 1}');
    assert.equal((await extractContent(body('# Title\n\ntext', 'text/markdown'))).content, '# Title\n\ntext');
  });

  it('binary content is refused, naming its type', async () => {
    await assert.rejects(extractContent(body(new Uint8Array([0x89, 0x50, 0x4e, 0x47]), 'image/png')), { message: 'cannot read content of type image/png' });
    await assert.rejects(extractContent(body(new Uint8Array([1, 0, 2, 0]), undefined)), { message: /cannot read content of type unknown \(binary\)/ });
  });
});
