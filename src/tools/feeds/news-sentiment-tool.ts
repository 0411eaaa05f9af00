import Sentiment from 'sentiment';
import type { ToolDefinition } from '../registry.ts';
import { aggregateNews, newsRequestOf, type NewsItem } from './news-aggregator-tool.ts';

const analyzer = new Sentiment();

/** AFINN-165 scores of the item's title and summary: `comparative` is the score per word, from -5 to 5. */
function scoreOf(item: NewsItem) {
  const result = analyzer.analyze(`${item.title}. ${item.summary}`);
  const label = result.comparative > 0.05 ? 'positive' : result.comparative < -0.05 ? 'negative' : 'neutral';
  return { ...item, sentiment: { score: result.score, comparative: Math.round(result.comparative * 1000) / 1000, label, positive: result.positive, negative: result.negative } };
}

/**
 * The news of the feeds (news_aggregator's reading, the same feeds and filter) with each item's sentiment by the
 * AFINN word list, and the average over the items: a quick read of a topic's tone, no model involved.
 */
export const newsSentimentTool: ToolDefinition = {
  name: 'news_sentiment',
  description: 'Reads news feeds (as news_aggregator) and scores each item\'s sentiment with the AFINN-165 word list: per item a score, a per-word comparative and a label, and the average over the items.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 200, description: 'Only items mentioning every word of it, e.g. a company or ticker' },
      feeds: { type: 'array', items: { type: 'string', pattern: '^https?://', maxLength: 2048 }, maxItems: 20, description: 'Feed urls; default the configured feeds' },
      max_items: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'How many items at most' },
    },
    additionalProperties: false,
  },
  category: 'news',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  namedOnly: true,
  async execute(input, context) {
    const news = await aggregateNews(newsRequestOf(input, 20), context);
    const items = news.items.map(scoreOf);
    const average = items.length === 0 ? 0 : items.reduce((sum, item) => sum + item.sentiment.comparative, 0) / items.length;
    const counts = Object.fromEntries(['positive', 'neutral', 'negative'].map((label) => [label, items.filter((item) => item.sentiment.label === label).length]));
    return { query: news.query, average_comparative: Math.round(average * 1000) / 1000, counts, items, feeds: news.feeds };
  },
};
