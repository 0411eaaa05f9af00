import type { VendorApi, VendorSettings } from '../../config.ts';
import { readCapped } from '../network/read-capped.ts';

/** A vendor the agents' tools call: how errors name it, and the setting that holds its key. */
export interface Vendor { name: string; keyVariable: string; signUp: string }

/** The key, or an error naming the variable to set (STYLE.md §4): a tool never answers without its vendor. */
export function vendorKey(vendor: Vendor, api: VendorApi, tool: string): string {
  if (api.apiKey) return api.apiKey;
  throw new Error(`${vendor.keyVariable} is not set: ${tool} calls ${vendor.name} (${vendor.signUp}) and needs its API key`);
}

/**
 * GETs a vendor's JSON within the time and size limits. Vendor base urls are operator configuration, not model
 * input, so these requests do not go through the network guard (as for the search vendors, issue 15).
 */
export async function getVendorJson(vendor: Vendor, url: URL, settings: Pick<VendorSettings, 'timeoutMs' | 'maxAnswerBytes'>, signal: AbortSignal): Promise<unknown> {
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.any([signal, deadline]) });
    const body = await readCapped(response.body, settings.maxAnswerBytes);
    if (body.truncated) throw new Error(`${vendor.name} answered more than ${settings.maxAnswerBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
    status = response.status;
    text = new TextDecoder().decode(body.bytes);
  } catch (error) {
    if (signal.aborted) throw error;
    if (deadline.aborted) throw new Error(`${vendor.name} did not answer within ${settings.timeoutMs / 1000} s`);
    throw new Error(`${vendor.name} could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = parseJson(text);
  if (status === 401 || status === 403) throw new Error(`${vendor.name} refused the key (HTTP ${status})${detailOf(parsed)}; check ${vendor.keyVariable}`);
  if (status === 429) throw new Error(`${vendor.name} rate limit reached (HTTP 429)${detailOf(parsed)}`);
  if (status !== 200) throw new Error(`${vendor.name} failed (HTTP ${status})${detailOf(parsed)}`);
  if (parsed === undefined) throw new Error(`${vendor.name} answered with something other than JSON`);
  return parsed;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const detailOf = (parsed: unknown) => {
  const error = (parsed as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' ? `: ${error.slice(0, 200)}` : '';
};

/** The url of `path` under a configured base url (which may itself have a path). */
export function vendorUrl(baseUrl: string, path: string, query: Record<string, string | number | undefined>): URL {
  const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  return url;
}
