import type { ToolDefinition } from '../registry.ts';
import { foundNothing, SERPAPI_COST_PER_SEARCH_USD, serpApiSearch } from './serpapi.ts';

interface SerpAd {
  position?: number; block_position?: string; title?: string; link?: string; displayed_link?: string;
  description?: string; sitelinks?: Array<{ title?: string; link?: string }>;
}

interface Creative {
  advertiser_id?: string; advertiser?: string; ad_creative_id?: string; format?: string; image?: string;
  width?: number; height?: number; target_domain?: string; first_shown?: number; last_shown?: number;
  total_days_shown?: number; details_link?: string;
}

const vendorTool = (tool: Omit<ToolDefinition, 'category' | 'dangerous' | 'effects' | 'namedOnly' | 'costPerUseUsd'>): ToolDefinition =>
  ({ ...tool, category: 'ads_research', costPerUseUsd: SERPAPI_COST_PER_SEARCH_USD, dangerous: false, effects: 'none', namedOnly: true });

/** The paid search ads Google shows for a query (SerpApi, engine `google`): position, block, title, links, text. */
export const adsSerpExtractTool = vendorTool({
  name: 'ads_serp_extract',
  description: 'The paid search ads Google shows for a query (through SerpApi): each ad\'s position, block (top or bottom), title, landing page, displayed url, text and sitelinks.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 400, description: 'The search query' },
      location: { type: 'string', maxLength: 200, description: 'Where the search comes from, e.g. "Austin, Texas, United States"' },
      country: { type: 'string', pattern: '^[a-z]{2}$', description: 'Google country code (gl), e.g. "us"' },
      language: { type: 'string', pattern: '^[a-z]{2}(-[a-zA-Z]{2})?$', description: 'Interface language (hl), e.g. "en"' },
      device: { type: 'string', enum: ['desktop', 'mobile', 'tablet'], description: 'Default desktop' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async execute(input, context) {
    const answer = await serpApiSearch('google', {
      q: String(input.query), location: input.location as string | undefined, gl: input.country as string | undefined,
      hl: input.language as string | undefined, device: input.device as string | undefined,
    }, 'ads_serp_extract', context);
    const ads = foundNothing(answer) ? [] : (answer.ads as SerpAd[] | undefined) ?? [];
    return {
      query: input.query, search_id: (answer.search_metadata as { id?: string } | undefined)?.id ?? null, ads_count: ads.length,
      ads: ads.map((ad) => ({
        position: ad.position ?? null, block: ad.block_position ?? null, title: ad.title ?? '', url: ad.link ?? null,
        displayed_url: ad.displayed_link ?? null, description: ad.description ?? '',
        sitelinks: (ad.sitelinks ?? []).map((link) => ({ title: link.title ?? '', url: link.link ?? null })),
      })),
    };
  },
});

/** An advertiser's ads in Google's Ads Transparency Center (SerpApi, engine `google_ads_transparency_center`). */
export const adsTransparencySearchTool = vendorTool({
  name: 'ads_transparency_search',
  description: 'The ads an advertiser (a domain or name) runs on Google, from the Ads Transparency Center through SerpApi: format, first and last day shown, image, target domain and details link.',
  parameters: {
    type: 'object',
    properties: {
      advertiser: { type: 'string', minLength: 1, maxLength: 200, description: 'The advertiser\'s domain or name, e.g. "tesla.com"' },
      region: { type: 'string', pattern: '^[0-9]{1,6}$', description: 'Google region code, e.g. "2840" for the United States; default anywhere' },
      format: { type: 'string', enum: ['text', 'image', 'video'], description: 'Only ads of this format' },
      max_ads: { type: 'integer', minimum: 1, maximum: 100, default: 40, description: 'How many ads at most' },
    },
    required: ['advertiser'],
    additionalProperties: false,
  },
  async execute(input, context) {
    const answer = await serpApiSearch('google_ads_transparency_center', {
      text: String(input.advertiser), region: input.region as string | undefined, creative_format: input.format as string | undefined,
      num: (input.max_ads as number | undefined) ?? 40,
    }, 'ads_transparency_search', context);
    const creatives = foundNothing(answer) ? [] : (answer.ad_creatives as Creative[] | undefined) ?? [];
    return {
      advertiser: input.advertiser, ads_count: creatives.length,
      ads: creatives.map((creative) => ({
        advertiser_id: creative.advertiser_id ?? null, advertiser: creative.advertiser ?? null, creative_id: creative.ad_creative_id ?? null,
        format: creative.format ?? null, image_url: creative.image ?? null, width: creative.width ?? null, height: creative.height ?? null,
        target_domain: creative.target_domain ?? null, first_shown: dayOf(creative.first_shown), last_shown: dayOf(creative.last_shown),
        days_shown: creative.total_days_shown ?? null, details_url: creative.details_link ?? null,
      })),
    };
  },
});

/** SerpApi gives the days as Unix seconds. */
const dayOf = (seconds: number | undefined) => (seconds === undefined ? null : new Date(seconds * 1000).toISOString().slice(0, 10));
