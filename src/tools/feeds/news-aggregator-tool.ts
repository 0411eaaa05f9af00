import { parseFeed } from '@rowanmanning/feed-parser';
import type { NewsSettings } from '../../config.ts';
import { guardedFetch } from '../network/guarded-fetch.ts';
import type { ToolContext, ToolDefinition } from '../registry.ts';
import { fixtureFeedsAt } from './fixture-feeds.ts';

const MAX_FEEDS = 20;
const DEFAULT_ITEMS = 20;
const SUMMARY_CHARS = 500;

export interface NewsItem { title: string; url: string | null; published: string | null; source: string; summary: string }
interface FeedReport { url: string; title: string | null; items: number; error?: string }

/**
 * Reads RSS and Atom feeds (through the network guard, or from the offline feed set while offline) and merges their
 * items, newest first, optionally only those whose title or summary mention `query`. A feed that fails is reported
 * with its reason; the call fails only when every feed does.
 */
export async function aggregateNews(input: { feeds?: string[]; query?: string; maxItems: number }, context: ToolContext) {
  const urls = feedUrlsOf(input.feeds, context.settings.news);
  const read = await Promise.all(urls.map((url) => readFeed(url, context)));
  if (read.every((feed) => feed.error !== undefined)) throw new Error(`no feed could be read: ${read.map((feed) => `${feed.url}: ${feed.error}`).join('; ')}`);
  const matches = matcherOf(input.query);
  const items = read.flatMap((feed) => feed.items).filter(matches).sort(newestFirst).slice(0, input.maxItems);
  return { query: input.query ?? null, items, feeds: read.map(({ items: feedItems, ...report }): FeedReport => ({ ...report, items: feedItems.length })) };
}

function feedUrlsOf(requested: string[] | undefined, news: NewsSettings): string[] {
  if (requested && requested.length > 0) return [...new Set(requested)];
  if (news.feeds.length > 0) return news.feeds;
  if (news.offline) return fixtureFeedsAt(news.fixtureDir).urls;
  throw new Error('no feeds given, and none configured: pass `feeds`, or set NEWS_FEEDS');
}

async function readFeed(url: string, context: ToolContext): Promise<{ url: string; title: string | null; items: NewsItem[]; error?: string }> {
  try {
    const feed = parseFeed(await feedXml(url, context));
    const source = feed.title ?? new URL(url).hostname;
    return { url, title: feed.title, items: feed.items.map((item) => itemOf(item, source)) };
  } catch (error) {
    if (context.signal.aborted) throw error;
    return { url, title: null, items: [], error: error instanceof Error ? error.message : String(error) };
  }
}

async function feedXml(url: string, context: ToolContext): Promise<string> {
  const { news, network } = context.settings;
  const offline = news.offline ? fixtureFeedsAt(news.fixtureDir).find(url) : undefined;
  if (offline !== undefined) return offline;
  const answer = await guardedFetch(url, { network, signal: context.signal, headers: { accept: 'application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5' } });
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`);
  if (answer.bodyTruncated) throw new Error(`the feed is longer than ${network.fetchMaxBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
  return answer.body.toString('utf8');
}

type ParsedItem = ReturnType<typeof parseFeed>['items'][number];

function itemOf(item: ParsedItem, source: string): NewsItem {
  const summary = plainText(item.description ?? item.content ?? '');
  return {
    title: plainText(item.title ?? '(untitled)'),
    url: item.url,
    published: (item.published ?? item.updated)?.toISOString() ?? null,
    source,
    summary: summary.length > SUMMARY_CHARS ? `${summary.slice(0, SUMMARY_CHARS)}…` : summary,
  };
}

/** Feed descriptions are often HTML: tags out, whitespace folded. */
const plainText = (html: string) => html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();

function matcherOf(query: string | undefined): (item: NewsItem) => boolean {
  const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return () => true;
  return (item) => {
    const text = `${item.title} ${item.summary}`.toLowerCase();
    return words.every((word) => text.includes(word));
  };
}

const newestFirst = (a: NewsItem, b: NewsItem) => (b.published ?? '').localeCompare(a.published ?? '');

export const newsAggregatorTool: ToolDefinition = {
  name: 'news_aggregator',
  description: 'Reads RSS and Atom news feeds and returns their items merged, newest first (title, url, date, source, summary), optionally only those mentioning a query.',
  parameters: {
    type: 'object',
    properties: {
      feeds: { type: 'array', items: { type: 'string', pattern: '^https?://', maxLength: 2048 }, maxItems: MAX_FEEDS, description: 'Feed urls; default: the configured feeds (NEWS_FEEDS)' },
      query: { type: 'string', maxLength: 200, description: 'Only items whose title or summary contain every word of it' },
      max_items: { type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_ITEMS, description: 'How many items at most' },
    },
    additionalProperties: false,
  },
  category: 'news',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  namedOnly: true,
  execute: (input, context) => aggregateNews(newsRequestOf(input, DEFAULT_ITEMS), context),
};

/** What a news tool's input asks for: its feeds (default: the configured ones), a query, and how many items. */
export function newsRequestOf(input: Record<string, unknown>, defaultItems: number) {
  return {
    feeds: input.feeds as string[] | undefined,
    query: typeof input.query === 'string' && input.query.trim() !== '' ? input.query : undefined,
    maxItems: (input.max_items as number | undefined) ?? defaultItems,
  };
}
