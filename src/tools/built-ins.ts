import type { Config } from '../config.ts';
import { bashTool } from './bash/bash-tool.ts';
import { BROWSER_TOOLS } from './browser/browser-tools.ts';
import { calculatorTool } from './calculator.ts';
import { createToolRegistry } from './create-registry.ts';
import { FILE_TOOLS } from './files/file-tools.ts';
import { pythonExecutorTool } from './python/python-executor.ts';
import type { ToolDefinition, ToolRegistry } from './registry.ts';
import { statisticsTool } from './statistics.ts';
import { competitorDiscoverTool } from './competitors/competitor-discover-tool.ts';
import { newsAggregatorTool } from './feeds/news-aggregator-tool.ts';
import { newsSentimentTool } from './feeds/news-sentiment-tool.ts';
import { imageFetchTool } from './images/image-fetch-tool.ts';
import { keywordExtractTool } from './keywords/keyword-extract-tool.ts';
import { adsSerpExtractTool, adsTransparencySearchTool } from './vendors/ads-tools.ts';
import { marketQuoteTool, priceHistoryTool } from './vendors/market-tools.ts';
import { webSearchTool, webSearchToolFor } from './web-search/web-search-tool.ts';
import { webCrawlTool } from './web/web-crawl-tool.ts';
import { webFetchTool } from './web/web-fetch-tool.ts';
import { webSubpageFetchTool } from './web/web-subpage-fetch-tool.ts';

/** Every tool this server ships with; MCP servers add theirs while it runs. */
export const BUILT_IN_TOOLS: readonly ToolDefinition[] = [
  calculatorTool, statisticsTool, webSearchTool, webFetchTool, webSubpageFetchTool, webCrawlTool, ...FILE_TOOLS, pythonExecutorTool, bashTool, ...BROWSER_TOOLS,
  // The single-purpose agents' tools (config/agents): offered to a role only when its preset names them.
  keywordExtractTool, newsAggregatorTool, competitorDiscoverTool, adsSerpExtractTool, adsTransparencySearchTool, marketQuoteTool, priceHistoryTool, imageFetchTool, newsSentimentTool,
];

/**
 * The built-in tools, and those `discovered` while the server runs (its MCP servers'). With the `config`,
 * web_search is charged at its configured provider's price.
 */
export function createBuiltInToolRegistry(discovered?: () => ToolDefinition[], config?: Readonly<Config>): ToolRegistry {
  const tools = BUILT_IN_TOOLS.map((tool) => (config && tool === webSearchTool ? webSearchToolFor(config) : tool));
  return createToolRegistry(tools, discovered);
}
