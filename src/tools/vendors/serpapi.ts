import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import type { ToolContext } from '../registry.ts';
import { getVendorJson, vendorKey, vendorUrl, type Vendor } from './vendor-request.ts';

export const SERPAPI: Vendor = { name: 'SerpApi', keyVariable: 'SERPAPI_API_KEY', signUp: 'https://serpapi.com' };
/** SerpApi's Developer plan: 75 USD for 5,000 searches a month (serpapi.com/pricing). */
export const SERPAPI_COST_PER_SEARCH_USD = 0.015;

/**
 * SerpApi's answer (serpapi.com/search-api): `search_metadata.status` is "Success" or "Error"; an `error` string
 * with HTTP 200 means the engine found nothing ("Google hasn't returned any results for this query.").
 */
const SerpAnswer = Type.Object({
  search_metadata: Type.Optional(Type.Object({ id: Type.Optional(Type.String()), status: Type.Optional(Type.String()) })),
  error: Type.Optional(Type.String()),
});

/** GET {base}/search.json?engine=…&api_key=… with the engine's own parameters; the answer checked and returned. */
export async function serpApiSearch(engine: string, query: Record<string, string | number | undefined>, tool: string, context: ToolContext): Promise<Record<string, unknown>> {
  const { serpApi } = context.settings.vendors;
  const apiKey = vendorKey(SERPAPI, serpApi, tool);
  const url = vendorUrl(serpApi.baseUrl, '/search.json', { engine, ...query, api_key: apiKey });
  const answer = await getVendorJson(SERPAPI, url, context.settings.vendors, context.signal);
  if (!Value.Check(SerpAnswer, answer)) throw new Error('SerpApi answered in an unexpected shape');
  const checked = answer as Static<typeof SerpAnswer> & Record<string, unknown>;
  if (checked.search_metadata?.status === 'Error' && checked.error) throw new Error(`SerpApi: ${checked.error}`);
  return checked;
}

/** "Google hasn't returned any results" comes as a 200 with `error`: an empty answer, not a failure. */
export const foundNothing = (answer: Record<string, unknown>) => typeof answer.error === 'string' && /hasn't returned any results/i.test(answer.error);
