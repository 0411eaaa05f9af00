import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';

const FrontMatter = Type.Object({
  title: Type.String({ minLength: 1 }),
  url: Type.String({ pattern: '^https?://' }),
  date: Type.Optional(Type.String()),
  source: Type.Optional(Type.String()),
}, { additionalProperties: false });

/** One page of the offline corpus: what the `fixture` search provider finds and web_fetch serves offline. */
export interface FixturePage extends Static<typeof FrontMatter> {
  /** The page's text as Markdown (the file's body). */
  text: string;
}

export interface FixtureCorpus {
  pages: FixturePage[];
  /** The page at this url (ignoring a trailing slash and the fragment), if the corpus has it. */
  find(url: string): FixturePage | undefined;
}

const corpora = new Map<string, FixtureCorpus>();

/** The corpus of `directory`, read once per process: adding a page takes a restart (config/search-corpus/README.md). */
export function fixtureCorpusAt(directory: string): FixtureCorpus {
  let corpus = corpora.get(directory);
  if (!corpus) {
    corpus = loadFixtureCorpus(directory);
    corpora.set(directory, corpus);
  }
  return corpus;
}

/**
 * Reads every `*.md` file of `directory`: YAML front matter (title, url, optional date and source) between
 * `---` lines, then the page's text. A file that does not fit stops the load with its name and the problem.
 */
export function loadFixtureCorpus(directory: string): FixtureCorpus {
  const pages = readdirSync(directory).filter(isPageFile).sort().map((name) => readPage(path.join(directory, name)));
  const byUrl = new Map(pages.map((page) => [normalizeUrl(page.url), page]));
  return { pages, find: (url) => byUrl.get(normalizeUrl(url)) };
}

/** The directory's README.md says how to add pages; it is not one. */
const isPageFile = (name: string) => name.endsWith('.md') && name.toLowerCase() !== 'readme.md';

function readPage(file: string): FixturePage {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(readFileSync(file, 'utf8'));
  if (!match) throw new Error(`corpus page ${file}: expected YAML front matter between --- lines`);
  const front = parse(match[1]) as unknown;
  if (!Value.Check(FrontMatter, front)) {
    const problem = Value.Errors(FrontMatter, front)[0];
    throw new Error(`corpus page ${file}: ${problem?.instancePath || '/'} ${problem?.message}`);
  }
  return { ...front, text: match[2].trim() };
}

function normalizeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
