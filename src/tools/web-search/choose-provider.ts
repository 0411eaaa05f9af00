import type { Logger } from 'pino';
import type { WebSearchProviderName, WebSearchSettings } from '../../config.ts';
import { fixtureCorpusAt } from '../web/fixture-corpus.ts';
import { BRAVE_COST_PER_CALL_USD, createBraveProvider } from './brave.ts';
import { createExaProvider, EXA_COST_PER_CALL_USD } from './exa.ts';
import { createFixtureProvider } from './fixture.ts';
import { SearchFailure, type SearchProvider } from './provider.ts';
import { createSearxngProvider, SEARXNG_COST_PER_CALL_USD } from './searxng.ts';
import { createTavilyProvider, TAVILY_COST_PER_CALL_USD } from './tavily.ts';

interface ProviderEntry {
  costPerCallUsd: number;
  /** The setting a vendor cannot work without, when it is unset. */
  missingSetting(settings: WebSearchSettings): string | undefined;
  create(settings: WebSearchSettings): SearchProvider;
}

const limitsOf = ({ timeoutMs, maxAnswerBytes }: WebSearchSettings) => ({ timeoutMs, maxAnswerBytes });

const PROVIDERS: Record<WebSearchProviderName, ProviderEntry> = {
  fixture: {
    costPerCallUsd: 0,
    missingSetting: () => undefined,
    create: (settings) => createFixtureProvider(fixtureCorpusAt(settings.corpusDir)),
  },
  tavily: {
    costPerCallUsd: TAVILY_COST_PER_CALL_USD,
    missingSetting: (settings) => (settings.tavily.apiKey ? undefined : 'TAVILY_API_KEY'),
    create: (settings) => createTavilyProvider({ ...settings.tavily, apiKey: settings.tavily.apiKey!, ...limitsOf(settings) }),
  },
  brave: {
    costPerCallUsd: BRAVE_COST_PER_CALL_USD,
    missingSetting: (settings) => (settings.brave.apiKey ? undefined : 'BRAVE_API_KEY'),
    create: (settings) => createBraveProvider({ ...settings.brave, apiKey: settings.brave.apiKey!, ...limitsOf(settings) }),
  },
  searxng: {
    costPerCallUsd: SEARXNG_COST_PER_CALL_USD,
    missingSetting: (settings) => (settings.searxng.baseUrl ? undefined : 'SEARXNG_BASE_URL'),
    create: (settings) => createSearxngProvider({ baseUrl: settings.searxng.baseUrl!, ...limitsOf(settings) }),
  },
  exa: {
    costPerCallUsd: EXA_COST_PER_CALL_USD,
    missingSetting: (settings) => (settings.exa.apiKey ? undefined : 'EXA_API_KEY'),
    create: (settings) => createExaProvider({ ...settings.exa, apiKey: settings.exa.apiKey!, ...limitsOf(settings) }),
  },
};

/** What one web_search call costs with this provider (USD). */
export const costPerSearchUsd = (provider: WebSearchProviderName) => PROVIDERS[provider].costPerCallUsd;

/** Why the configured provider cannot search, naming the setting to add; undefined when it can. */
export function missingSettingMessage(settings: WebSearchSettings): string | undefined {
  const missing = PROVIDERS[settings.provider].missingSetting(settings);
  return missing && `WEB_SEARCH_PROVIDER=${settings.provider} needs ${missing}`;
}

const providers = new WeakMap<WebSearchSettings, SearchProvider>();

/** The configured provider, built once per settings object; one missing its credential fails every search with the reason. */
export function searchProviderFor(settings: WebSearchSettings): SearchProvider {
  let provider = providers.get(settings);
  if (!provider) {
    const missing = missingSettingMessage(settings);
    provider = missing ? unconfigured(settings.provider, missing) : PROVIDERS[settings.provider].create(settings);
    providers.set(settings, provider);
  }
  return provider;
}

function unconfigured(name: WebSearchProviderName, message: string): SearchProvider {
  return { name, search: async () => { throw new SearchFailure(name, 'missing-credential', message); } };
}


/**
 * Says at start-up which provider web_search uses, or (as a warning) what it lacks. The fixture corpus is read
 * here, so a malformed page stops start-up naming its file, as an invalid template does.
 */
export function logWebSearchSetup(logger: Logger, settings: WebSearchSettings): void {
  const { ready, message } = describeWebSearch(settings);
  logger[ready ? 'info' : 'warn']({ web_search_provider: settings.provider }, message);
}

export function describeWebSearch(settings: WebSearchSettings): { ready: boolean; message: string } {
  const missing = missingSettingMessage(settings);
  if (missing) return { ready: false, message: `web search: ${missing}; web_search calls will fail until it is set` };
  if (settings.provider === 'fixture') {
    return { ready: true, message: `web search: offline fixture corpus (${fixtureCorpusAt(settings.corpusDir).pages.length} pages in ${settings.corpusDir})` };
  }
  return { ready: true, message: `web search: ${settings.provider}` };
}
