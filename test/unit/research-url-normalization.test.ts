import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { doiOf, domainOf, normalizeUrl } from '../../src/workflows/modes/research/citations/normalize-url.ts';

/** [what the case is about, url as a tool returned it, normalised form (undefined: not citable)] */
const CASES: Array<[string, string, string | undefined]> = [
  ['utm_source dropped', 'https://example.com/a?utm_source=news', 'https://example.com/a'],
  ['every utm_ parameter dropped, others kept', 'https://example.com/a?utm_medium=x&id=7&utm_campaign=y&utm_term=z&utm_content=w', 'https://example.com/a?id=7'],
  ['tracking names compared without case', 'https://example.com/a?UTM_Source=x&FBCLID=y&id=1', 'https://example.com/a?id=1'],
  ['fbclid dropped', 'https://example.com/a?fbclid=IwAR0abc', 'https://example.com/a'],
  ['gclid dropped', 'https://example.com/a?gclid=Cj0KCQ', 'https://example.com/a'],
  ['msclkid dropped', 'https://example.com/a?msclkid=123', 'https://example.com/a'],
  ['ref dropped', 'https://example.com/a?ref=hn', 'https://example.com/a'],
  ['source dropped', 'https://example.com/a?source=twitter', 'https://example.com/a'],
  ['only exact tracking names: referrer and sources stay', 'https://example.com/a?referrer=1&sources=2', 'https://example.com/a?referrer=1&sources=2'],
  ['only tracking parameters: no question mark left', 'https://example.com/?utm_source=a&fbclid=b', 'https://example.com'],
  ['scheme and host lower-cased, path case kept', 'HTTPS://EXAMPLE.COM/Path/To', 'https://example.com/Path/To'],
  ['www. stripped', 'https://www.example.com/a', 'https://example.com/a'],
  ['WWW. stripped after lower-casing', 'https://WWW.Example.com', 'https://example.com'],
  ['www2. is a different host', 'https://www2.example.com/', 'https://www2.example.com'],
  ['www without its dot is part of the name', 'https://wwwexample.com/', 'https://wwwexample.com'],
  ['fragment dropped', 'https://example.com/a#section-2', 'https://example.com/a'],
  ['a hash route is a fragment too', 'https://example.com/#/route', 'https://example.com'],
  ['fragment after a query dropped', 'https://example.com/a?x=1#top', 'https://example.com/a?x=1'],
  ['http stays http', 'http://example.com/a', 'http://example.com/a'],
  ['default https port dropped', 'https://example.com:443/a', 'https://example.com/a'],
  ['default http port dropped', 'http://example.com:80/', 'http://example.com'],
  ['other port kept', 'https://example.com:8443/a', 'https://example.com:8443/a'],
  ['www. stripped before a port', 'https://www.example.com:8443/', 'https://example.com:8443'],
  ['IPv4 host with port', 'http://127.0.0.1:8080/x/', 'http://127.0.0.1:8080/x'],
  ['query parameters sorted by name', 'https://example.com/s?b=2&a=1', 'https://example.com/s?a=1&b=2'],
  ['a repeated parameter keeps its values in order', 'https://example.com/s?q=2&a=1&q=1', 'https://example.com/s?a=1&q=2&q=1'],
  ['%20 and + in a query are the same', 'https://example.com/s?q=a%20b', 'https://example.com/s?q=a+b'],
  ['IDN host in its ASCII form', 'https://Bücher.example/Straße', 'https://xn--bcher-kva.example/Stra%C3%9Fe'],
  ['IDN host with www.', 'https://www.bücher.example/', 'https://xn--bcher-kva.example'],
  ['punycode host unchanged', 'https://xn--bcher-kva.example/a', 'https://xn--bcher-kva.example/a'],
  ['trailing slash stripped', 'https://example.com/a/b/', 'https://example.com/a/b'],
  ['several trailing slashes stripped', 'https://example.com/a//', 'https://example.com/a'],
  ['root slash stripped', 'https://example.com/', 'https://example.com'],
  ['trailing slash before a query stripped', 'https://example.com/a/?x=1', 'https://example.com/a?x=1'],
  ['credentials dropped', 'https://user:secret@example.com/a', 'https://example.com/a'],
  ['surrounding whitespace ignored', '  https://example.com/a \n', 'https://example.com/a'],
  ['a DOI url keeps its path (DOI matching is apart)', 'https://doi.org/10.1000/ABC.123', 'https://doi.org/10.1000/ABC.123'],
  ['mailto refused', 'mailto:someone@example.com', undefined],
  ['javascript refused', 'javascript:alert(1)', undefined],
  ['ftp refused', 'ftp://example.com/file.txt', undefined],
  ['file refused', 'file:///etc/passwd', undefined],
  ['data refused', 'data:text/html,<p>hi</p>', undefined],
  ['protocol-relative refused (no scheme)', '//example.com/a', undefined],
  ['not a url', 'see the report above', undefined],
  ['empty', '', undefined],
  ['no host', 'https://', undefined],
];

describe('citation url normalisation', () => {
  it('has at least 30 cases', () => assert.ok(CASES.length >= 30));
  for (const [about, url, expected] of CASES) {
    it(`${about}: ${JSON.stringify(url)}`, () => assert.equal(normalizeUrl(url), expected));
  }

  it('two spellings of one page share a form, and a normalised url is its own form', () => {
    assert.equal(normalizeUrl('HTTP://WWW.Example.com:80/news/?utm_source=rss&b=1&a=2#comments'), normalizeUrl('http://example.com/news?a=2&b=1'));
    for (const [, url, expected] of CASES) if (expected !== undefined) assert.equal(normalizeUrl(expected), expected, url);
  });
});

describe('DOIs and domains of citation urls', () => {
  const DOI_CASES: Array<[string, string | undefined]> = [
    ['https://doi.org/10.1000/xyz123', '10.1000/xyz123'],
    ['https://dx.doi.org/10.1038/NATURE12373', '10.1038/nature12373'],
    ['https://dl.acm.org/doi/10.1145/3368089.3409741', '10.1145/3368089.3409741'],
    ['https://onlinelibrary.wiley.com/doi/full/10.1002/anie.201915678?af=R', '10.1002/anie.201915678'],
    ['https://doi.org/10.1000%2Fencoded', '10.1000/encoded'],
    ['https://example.com/doi/10.1000/trailing.', '10.1000/trailing'],
    ['https://example.com/articles/10-things', undefined],
    ['https://example.com/v10.1/docs', undefined],
  ];
  for (const [url, doi] of DOI_CASES) it(`doiOf ${url}`, () => assert.equal(doiOf(url), doi));

  it('the domain is the host without www. and port, subdomains kept', () => {
    assert.equal(domainOf('https://www.example.com:8443/a'), 'example.com');
    assert.equal(domainOf('https://blog.example.com/a'), 'blog.example.com');
    assert.equal(domainOf('nonsense'), '');
  });
});
