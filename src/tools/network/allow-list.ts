import ipaddr from 'ipaddr.js';
import { parseAddress } from './address-kind.ts';

/** Hosts and ranges TOOLS_NETWORK_ALLOW opens to the tools even though they are not public. */
export interface AllowList {
  /** A host name or IP literal named in the list, on any port or on this one. */
  allowsHost(hostname: string, port: string): boolean;
  /** An address inside one of the listed ranges (a bare IP counts as a range of one). */
  allowsAddress(address: string): boolean;
}

interface HostEntry { hostname: string; port: string | undefined }

/**
 * Entries are host names (`intranet.example`), `host:port` (`127.0.0.1:8080`, `[::1]:8080`), IP addresses and
 * CIDR ranges (`10.1.0.0/16`). Host names go through the URL parser, so `0177.0.0.1:80` means 127.0.0.1.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts: HostEntry[] = [];
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const entry of entries) {
    if (ipaddr.isValidCIDR(entry)) ranges.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) ranges.push(singleAddressRange(entry));
    else hosts.push(hostEntryOf(entry));
  }
  return {
    allowsHost: (hostname, port) => hosts.some((host) => host.hostname === comparable(hostname) && (host.port === undefined || host.port === port)),
    allowsAddress: (text) => {
      const address = processed(text);
      return ranges.some(([network, bits]) => address.kind() === network.kind() && address.match(network, bits));
    },
  };
}

function hostEntryOf(entry: string): HostEntry {
  const url = URL.parse(`http://${entry}`);
  if (!url || `${url.username}${url.password}${url.search}${url.hash}` !== '' || url.pathname !== '/' || entry.endsWith('/')) {
    throw new Error(`TOOLS_NETWORK_ALLOW: "${entry}" is neither a host name, a host:port, an IP address nor a CIDR range`);
  }
  // The URL parser drops a port equal to the scheme's default, so the written one is read back from the entry.
  const port = /:(\d+)$/.exec(entry)?.[1];
  return { hostname: comparable(url.hostname), port: port === undefined ? undefined : String(Number(port)) };
}

function singleAddressRange(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const address = processed(text);
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

/** IPv4-mapped IPv6 is compared as the IPv4 address it maps. */
const processed = (text: string) => ipaddr.process(parseAddress(text).toString());

const comparable = (hostname: string) => hostname.toLowerCase().replace(/\.$/, '');
