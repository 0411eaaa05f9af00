import type { Config } from '../../config.ts';
import { fixtureCorpusAt, type FixtureCorpus } from './fixture-corpus.ts';

/**
 * The offline corpus when web_search answers from it (WEB_SEARCH_PROVIDER=fixture): the pages it finds are
 * then served from it, so a whole research task runs with no network. Read once per process.
 */
export function offlineCorpusOf(config: Pick<Config, 'webSearch'>): FixtureCorpus | undefined {
  if (config.webSearch.provider !== 'fixture') return undefined;
  return fixtureCorpusAt(config.webSearch.corpusDir);
}
