import type { Config } from '../config.ts';
import { badRequest } from '../errors.ts';
import { parseAllowList } from '../tools/network/allow-list.ts';
import { checkDestination } from '../tools/network/check-destination.ts';
import { hostResolverOf } from '../tools/network/resolve-host.ts';

/**
 * A webhook URL passes the tools' outbound guard: http(s), and no private, loopback or metadata address unless
 * TOOLS_NETWORK_ALLOW opens it. Checked when a URL is given (400 naming why) and again at every attempt, since
 * what a name resolves to can change (deliver-webhook.ts connects only to the address it checked).
 */
export async function refuseUnsafeWebhookUrl(network: Readonly<Config['network']>, text: string, field = 'url'): Promise<void> {
  const url = URL.parse(text);
  if (!url) throw badRequest(`${field}: not a valid URL`);
  if (url.username !== '' || url.password !== '') throw badRequest(`${field}: credentials in the URL are refused`);
  try {
    await checkDestination(url, parseAllowList(network.allow), hostResolverOf(network.dnsServers));
  } catch (error) {
    throw badRequest(`${field}: ${(error as Error).message}`);
  }
}
