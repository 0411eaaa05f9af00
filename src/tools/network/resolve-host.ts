import dns from 'node:dns/promises';

export interface ResolvedAddress { address: string; family: number }

/** Every address a host name resolves to. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

const resolveWithSystem: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, order: 'verbatim' });

const resolvers = new WeakMap<readonly string[], ResolveHost>();

/**
 * How the tools look up the hosts they are asked to reach: the system's resolver, or, when TOOLS_DNS_SERVERS
 * names servers, those servers and only them (no hosts file, no search domains), e.g. a filtering resolver.
 */
export function hostResolverOf(dnsServers: readonly string[]): ResolveHost {
  if (dnsServers.length === 0) return resolveWithSystem;
  let resolveHost = resolvers.get(dnsServers);
  if (!resolveHost) {
    resolveHost = resolverThrough(dnsServers);
    resolvers.set(dnsServers, resolveHost);
  }
  return resolveHost;
}

/** A and AAAA questions to the given servers; a name is unknown only when neither question has an answer. */
function resolverThrough(dnsServers: readonly string[]): ResolveHost {
  const resolver = new dns.Resolver();
  resolver.setServers(dnsServers);
  return async (hostname) => {
    const [ipv4, ipv6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [
      ...(ipv4.status === 'fulfilled' ? ipv4.value.map((address) => ({ address, family: 4 })) : []),
      ...(ipv6.status === 'fulfilled' ? ipv6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0 && ipv4.status === 'rejected') throw ipv4.reason;
    return addresses;
  };
}
