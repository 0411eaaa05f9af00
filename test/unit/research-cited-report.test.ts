import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCitedReport } from '../../src/workflows/modes/research/citations/cited-report.ts';

const sources = [
  { url: 'https://a.example/one', title: 'Source A' },
  { url: 'https://b.example/two', title: 'Source B' },
  { url: 'https://c.example/three', title: 'Source C', matchKeys: ['https://c.example/three', 'https://c.example/moved'] },
];

const sourcesSection = (text: string) => text.slice(text.indexOf('## Sources'));
const markersOf = (text: string) => [...text.slice(0, text.indexOf('## Sources')).matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1]));

describe('the cited report', () => {
  it('renumbers markers by first appearance and lists exactly the cited sources', () => {
    const report = buildCitedReport('Rivers are long [3]. Mountains are high [1].\n\nBoth matter [3][1].', sources);
    assert.equal(report.text, 'Rivers are long [1]. Mountains are high [2].\n\nBoth matter [1][2].\n\n## Sources\n\n'
      + '[1] Source C - https://c.example/three\n[2] Source A - https://a.example/one\n');
    assert.deepEqual(report.citations.map((source) => source.title), ['Source C', 'Source A']);
    assert.equal(report.droppedMarkers, 0);
  });

  it('drops markers that name no source, with the space before them', () => {
    const report = buildCitedReport('One [1]. Two [7]. Three [0], four [2][9] end.', sources);
    assert.equal(report.text.split('\n\n')[0], 'One [1]. Two. Three, four [2] end.');
    assert.equal(report.droppedMarkers, 3);
    assert.deepEqual(markersOf(report.text), [1, 2]);
  });

  it('expands lists and ranges, each number once', () => {
    const report = buildCitedReport('All three [1, 2, 3]. Again [2-3]. Twice [2, 2].', sources);
    assert.equal(report.text.split('\n\n')[0], 'All three [1, 2, 3]. Again [2, 3]. Twice [2].');
  });

  it('replaces the report\'s own Sources section, reading which url each of its numbers meant', () => {
    const text = 'Claim one [1]. Claim two [2]. Claim three [3].\n\n## References\n\n'
      + '1. https://www.b.example/two/?utm_source=x\n[2] Invented - https://invented.example/page\n- [3]: Moved (https://c.example/moved#x)\n\n## Appendix\n\nMore [1].';
    const report = buildCitedReport(text, sources);
    assert.equal(report.text.split('\n\n## Appendix')[0], 'Claim one [1]. Claim two. Claim three [2].');
    assert.match(report.text, /## Appendix\n\nMore \[1\]\.\n\n## Sources/);
    assert.equal(sourcesSection(report.text), '## Sources\n\n[1] Source B - https://b.example/two\n[2] Source C - https://c.example/three\n');
    assert.equal(report.droppedMarkers, 1, 'the marker whose url no tool returned');
  });

  it('keeps every marker resolvable: each [n] has a Sources line and each line is a given source', () => {
    const report = buildCitedReport('A [2]. B [5]. C [3] [1]. D [2].\n\n### Sources\n[5] https://evil.example', sources);
    const listed = [...sourcesSection(report.text).matchAll(/^\[(\d+)\] .* - (\S+)$/gm)].map((match) => [Number(match[1]), match[2]]);
    const markers = new Set(markersOf(report.text));
    assert.deepEqual([...markers].sort(), listed.map(([number]) => number));
    for (const [, url] of listed) assert.ok(sources.some((source) => source.url === url), String(url));
    assert.ok(!report.text.includes('evil.example'));
  });

  it('recognises a Sources list introduced by a bold line, up to the next heading', () => {
    const report = buildCitedReport('Fact [1].\n\n**Sources:**\n1. https://c.example/three\n\n## Next\n\nMore.', sources);
    assert.equal(report.text, 'Fact [1].\n\n## Next\n\nMore.\n\n## Sources\n\n[1] Source C - https://c.example/three\n');
  });

  it('leaves code, links, reference definitions and indexing alone', () => {
    const text = 'See `items[2]` and [2](https://a.example/one) and array[3] and [text][1].\n\n```\nlist[1] = [2]\n```\n\n[1]: https://a.example/one';
    const report = buildCitedReport(text, sources);
    assert.equal(report.text, text, 'nothing to renumber, no Sources section added');
    assert.equal(report.citations.length, 0);
  });

  it('a year in brackets is not a marker', () => {
    assert.equal(buildCitedReport('Founded [1998] per [1].', sources).text.split('\n\n')[0], 'Founded [1998] per [1].');
  });

  it('lists the uncited sources after the cited ones when asked', () => {
    const report = buildCitedReport('Only B [2].', sources, { includeUncited: true });
    assert.deepEqual(report.citations.map((source) => source.title), ['Source B', 'Source A', 'Source C']);
    assert.match(report.text, /^Only B \[1\]\./);
    assert.match(sourcesSection(report.text), /\[3\] Source C/);
  });
});
