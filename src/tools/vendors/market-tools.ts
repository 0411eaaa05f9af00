import type { ToolContext, ToolDefinition } from '../registry.ts';
import { getVendorJson, vendorKey, vendorUrl, type Vendor } from './vendor-request.ts';

export const ALPHA_VANTAGE: Vendor = { name: 'Alpha Vantage', keyVariable: 'ALPHA_VANTAGE_API_KEY', signUp: 'https://www.alphavantage.co/support/#api-key' };

const symbol = { type: 'string', pattern: '^[A-Za-z0-9.\\-:]{1,20}$', description: 'The ticker symbol, e.g. "IBM" or "TSCO.LON"' } as const;

/**
 * GET {base}/query?function=…&apikey=…. Alpha Vantage answers problems with HTTP 200: `Error Message` (a bad
 * symbol or function), `Note` or `Information` (a rate limit, or a premium-only call).
 */
async function alphaVantage(fn: string, query: Record<string, string>, tool: string, context: ToolContext): Promise<Record<string, unknown>> {
  const api = context.settings.vendors.alphaVantage;
  const apiKey = vendorKey(ALPHA_VANTAGE, api, tool);
  const answer = await getVendorJson(ALPHA_VANTAGE, vendorUrl(api.baseUrl, '/query', { function: fn, ...query, apikey: apiKey }), context.settings.vendors, context.signal) as Record<string, unknown>;
  for (const key of ['Error Message', 'Note', 'Information']) {
    if (typeof answer[key] === 'string') throw new Error(`Alpha Vantage: ${(answer[key] as string).slice(0, 300)}`);
  }
  return answer;
}

const marketTool = (tool: Omit<ToolDefinition, 'category' | 'dangerous' | 'effects' | 'namedOnly' | 'costPerUseUsd'>): ToolDefinition =>
  ({ ...tool, category: 'financial', costPerUseUsd: 0, dangerous: false, effects: 'none', namedOnly: true });

const numberOf = (value: unknown) => (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value.replace('%', ''))) ? Number(value.replace('%', '')) : null);

/** The latest price of a symbol (GLOBAL_QUOTE): fields come as "01. symbol", "05. price", … strings. */
export const marketQuoteTool = marketTool({
  name: 'market_quote',
  description: 'The latest quote of a stock or ETF (Alpha Vantage GLOBAL_QUOTE): price, open, high, low, volume, previous close, change and change percent, and the trading day.',
  parameters: { type: 'object', properties: { symbol }, required: ['symbol'], additionalProperties: false },
  async execute(input, context) {
    const answer = await alphaVantage('GLOBAL_QUOTE', { symbol: String(input.symbol) }, 'market_quote', context);
    const quote = answer['Global Quote'] as Record<string, string> | undefined;
    if (!quote || Object.keys(quote).length === 0) throw new Error(`Alpha Vantage has no quote for ${String(input.symbol)}`);
    return {
      symbol: quote['01. symbol'], price: numberOf(quote['05. price']), open: numberOf(quote['02. open']), high: numberOf(quote['03. high']),
      low: numberOf(quote['04. low']), volume: numberOf(quote['06. volume']), trading_day: quote['07. latest trading day'] ?? null,
      previous_close: numberOf(quote['08. previous close']), change: numberOf(quote['09. change']), change_percent: numberOf(quote['10. change percent']),
    };
  },
});

/** Daily prices of a symbol (TIME_SERIES_DAILY), newest first, with the period's return. */
export const priceHistoryTool = marketTool({
  name: 'price_history',
  description: 'Daily open, high, low, close and volume of a stock (Alpha Vantage TIME_SERIES_DAILY), newest first, with the return over the days returned.',
  parameters: {
    type: 'object',
    properties: { symbol, days: { type: 'integer', minimum: 1, maximum: 100, default: 30, description: 'How many trading days, newest first' } },
    required: ['symbol'],
    additionalProperties: false,
  },
  async execute(input, context) {
    const answer = await alphaVantage('TIME_SERIES_DAILY', { symbol: String(input.symbol), outputsize: 'compact' }, 'price_history', context);
    const series = answer['Time Series (Daily)'] as Record<string, Record<string, string>> | undefined;
    if (!series) throw new Error(`Alpha Vantage has no daily series for ${String(input.symbol)}`);
    const days = Object.entries(series).sort(([a], [b]) => b.localeCompare(a)).slice(0, (input.days as number | undefined) ?? 30).map(([date, bar]) => ({
      date, open: numberOf(bar['1. open']), high: numberOf(bar['2. high']), low: numberOf(bar['3. low']), close: numberOf(bar['4. close']), volume: numberOf(bar['5. volume']),
    }));
    const first = days.at(-1)?.close;
    const last = days[0]?.close;
    const periodReturn = first && last ? Math.round(((last - first) / first) * 10_000) / 100 : null;
    return { symbol: (answer['Meta Data'] as Record<string, string> | undefined)?.['2. Symbol'] ?? input.symbol, days, return_percent: periodReturn };
  },
});
