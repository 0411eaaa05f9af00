import { isIpLiteral, nonPublicKindOf } from './address-kind.ts';
import type { AllowList } from './allow-list.ts';
import type { ResolvedAddress, ResolveHost } from './resolve-host.ts';

const ALLOW_HINT = '(set TOOLS_NETWORK_ALLOW to allow it)';

/**
 * The addresses a request to `url` may connect to, or a refusal: only http and https, and only public
 * addresses unless TOOLS_NETWORK_ALLOW names the host (and port) or a range holding the address. A host name
 * is refused when any of its answers is refused, so no answer can be chosen later to reach what was refused.
 */
export async function checkDestination(url: URL, allowList: AllowList, resolveHost: ResolveHost): Promise<ResolvedAddress[]> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`refused: only http and https URLs can be fetched (got ${url.protocol})`);
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const isHostAllowed = allowList.allowsHost(url.hostname, port);
  if (isIpLiteral(url.hostname)) {
    const address = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!isHostAllowed) refuseUnlessAllowed(address, allowList, `${address} is`);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  }
  const addresses = await resolveOrExplain(url.hostname, resolveHost);
  if (!isHostAllowed) {
    for (const { address } of addresses) refuseUnlessAllowed(address, allowList, `${url.hostname} resolves to ${address},`);
  }
  return addresses;
}

function refuseUnlessAllowed(address: string, allowList: AllowList, subject: string): void {
  const kind = nonPublicKindOf(address);
  if (kind !== undefined && !allowList.allowsAddress(address)) throw new Error(`refused: ${subject} ${kind} ${ALLOW_HINT}`);
}

async function resolveOrExplain(hostname: string, resolveHost: ResolveHost): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveHost(hostname);
  } catch (error) {
    throw new Error(`cannot resolve ${hostname}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (addresses.length === 0) throw new Error(`cannot resolve ${hostname}: no address`);
  return addresses;
}
