import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const METADATA_ADDRESS = '169.254.169.254';

/** How each non-public range is named in a refusal; any other range but `unicast` is "special-purpose". */
const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  reserved: 'a reserved address',
};

/**
 * Why an address is not a public one ("a loopback address"…), or undefined when it is. IPv6 forms that carry
 * an IPv4 address (mapped, compatible, translated, NAT64, 6to4) are judged by the IPv4 address they carry,
 * since that is where a connection to them may end up.
 */
export function nonPublicKindOf(text: string): string | undefined {
  const address = embeddedIPv4Of(parseAddress(text));
  if (address.toString() === METADATA_ADDRESS) return 'the cloud metadata address';
  const range = address.range();
  if (range === 'unicast') return undefined;
  return RANGE_NAMES[range] ?? `a special-purpose address (${range})`;
}

/** An IP literal as written in a URL or a DNS answer (brackets and an IPv6 zone allowed). */
export function parseAddress(text: string): Address {
  return ipaddr.parse(text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''));
}

export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(hostname.replace(/^\[(.*)\]$/, '$1'));
}

function embeddedIPv4Of(address: Address): Address {
  if (address.kind() === 'ipv4') return address;
  const ipv6 = address as ipaddr.IPv6;
  const { parts } = ipv6;
  const range = ipv6.range();
  const lowBits = () => ipv4From(parts[6], parts[7]);
  if (range === 'ipv4Mapped' || range === 'rfc6145') return lowBits();
  // IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::a.b.c.d); `::` and `::1` keep their own kind.
  if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || parts[7] > 1)) return lowBits();
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((part) => part === 0)) return lowBits();
  if (range === '6to4') return ipv4From(parts[1], parts[2]);
  return ipv6;
}

const ipv4From = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
