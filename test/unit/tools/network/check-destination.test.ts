import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../../src/config.ts';
import { nonPublicKindOf } from '../../../../src/tools/network/address-kind.ts';
import { parseAllowList } from '../../../../src/tools/network/allow-list.ts';
import { checkDestination } from '../../../../src/tools/network/check-destination.ts';
import type { ResolveHost } from '../../../../src/tools/network/resolve-host.ts';

const noResolver: ResolveHost = async (hostname) => { throw new Error(`unexpected lookup of ${hostname}`); };
const nothingAllowed = parseAllowList([]);

function resolverOf(answers: Record<string, string[]>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('address kinds', () => {
  const cases: Array<[string, string | undefined]> = [
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['10.0.0.1', 'a private address'],
    ['172.16.5.4', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['169.254.1.1', 'a link-local address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['0.0.0.0', 'an unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd00:ec2::254', 'a unique-local address'],
    ['ff02::1', 'a multicast address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:a00:1', 'a private address'],
    ['::ffff:169.254.169.254', 'the cloud metadata address'],
    ['::127.0.0.1', 'a loopback address'],
    ['::ffff:0:127.0.0.1', 'a loopback address'],
    ['64:ff9b::127.0.0.1', 'a loopback address'],
    ['2002:7f00:1::', 'a loopback address'],
    ['8.8.8.8', undefined],
    ['1.1.1.1', undefined],
    ['2606:4700:4700::1111', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['64:ff9b::808:808', undefined],
  ];
  for (const [address, kind] of cases) {
    it(`${address} is ${kind ?? 'public'}`, () => assert.equal(nonPublicKindOf(address), kind));
  }
});

describe('destinations refused by default', () => {
  // Every way of writing a loopback or private address the acceptance lists, as a URL would carry it.
  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:8080/', /^refused: 127\.0\.0\.1 is a loopback address \(set TOOLS_NETWORK_ALLOW to allow it\)$/],
    ['http://10.0.0.1/', /10\.0\.0\.1 is a private address/],
    ['http://[::1]/', /::1 is a loopback address/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is the cloud metadata address/],
    ['http://2130706433/', /127\.0\.0\.1 is a loopback address/],
    ['http://0177.0.0.1/', /127\.0\.0\.1 is a loopback address/],
    ['http://017700000001/', /127\.0\.0\.1 is a loopback address/],
    ['http://0x7f.0.0.1/', /127\.0\.0\.1 is a loopback address/],
    ['http://0x7f000001/', /127\.0\.0\.1 is a loopback address/],
    ['http://127.1/', /127\.0\.0\.1 is a loopback address/],
    ['http://0/', /0\.0\.0\.0 is an unspecified address/],
    ['http://[::ffff:127.0.0.1]/', /::ffff:7f00:1 is a loopback address/],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', /is a loopback address/],
    ['http://[::127.0.0.1]/', /is a loopback address/],
    ['http://[::ffff:169.254.169.254]/', /is the cloud metadata address/],
    ['http://[::]/', /:: is an unspecified address/],
    ['http://[fe80::1]/', /is a link-local address/],
    ['http://[fd12:3456::1]/', /is a unique-local address/],
    ['http://100.100.100.100/', /is a carrier-grade NAT address/],
    ['http://224.0.0.251/', /is a multicast address/],
  ];
  for (const [url, message] of refused) {
    it(`${url} is refused without a lookup`, async () => {
      await assert.rejects(checkDestination(new URL(url), nothingAllowed, noResolver), { message });
    });
  }

  it('schemes other than http and https are refused', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.org/', 'gopher://example.org/']) {
      await assert.rejects(checkDestination(new URL(url), nothingAllowed, noResolver), { message: /^refused: only http and https URLs can be fetched/ });
    }
  });

  it('a public address is allowed', async () => {
    assert.deepEqual(await checkDestination(new URL('https://93.184.215.14/'), nothingAllowed, noResolver), [{ address: '93.184.215.14', family: 4 }]);
  });
});

describe('host names are judged by every address they resolve to', () => {
  it('a name resolving to loopback is refused, naming the name and the address', async () => {
    const resolve = resolverOf({ 'loopback.test': ['127.0.0.1'] });
    await assert.rejects(checkDestination(new URL('http://loopback.test/'), nothingAllowed, resolve),
      { message: /^refused: loopback\.test resolves to 127\.0\.0\.1, a loopback address \(set TOOLS_NETWORK_ALLOW to allow it\)$/ });
  });

  it('one private answer among public ones is enough to refuse', async () => {
    const resolve = resolverOf({ 'mixed.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '10.1.2.3'] });
    await assert.rejects(checkDestination(new URL('http://mixed.test/'), nothingAllowed, resolve), /mixed\.test resolves to 10\.1\.2\.3, a private address/);
  });

  it('IPv4-mapped answers are judged as the IPv4 address they carry', async () => {
    const resolve = resolverOf({ 'mapped.test': ['::ffff:192.168.0.10'] });
    await assert.rejects(checkDestination(new URL('http://mapped.test/'), nothingAllowed, resolve), /a private address/);
  });

  it('public answers are returned, each to be connected to as checked', async () => {
    const resolve = resolverOf({ 'public.test': ['93.184.215.14', '2606:4700:4700::1111'] });
    assert.deepEqual(await checkDestination(new URL('http://public.test/'), nothingAllowed, resolve), [
      { address: '93.184.215.14', family: 4 }, { address: '2606:4700:4700::1111', family: 6 },
    ]);
    assert.deepEqual(resolve.calls, ['public.test']);
  });

  it('a name that does not resolve says so', async () => {
    await assert.rejects(checkDestination(new URL('http://missing.test/'), nothingAllowed, resolverOf({})), /cannot resolve missing\.test: ENOTFOUND/);
  });
});

describe('TOOLS_NETWORK_ALLOW', () => {
  it('is empty by default; the fetch caps default to 15 s and 5 MB', () => {
    assert.deepEqual(loadConfig({}).network, { allow: [], fetchTimeoutMs: 15_000, fetchMaxBytes: 5_242_880, dnsServers: [] });
    assert.deepEqual(loadConfig({ TOOLS_NETWORK_ALLOW: ' stand-in.test:8080 , 10.0.0.0/8 ,' }).network.allow, ['stand-in.test:8080', '10.0.0.0/8']);
  });

  it('a host:port entry opens that port of that host only', async () => {
    const allow = parseAllowList(['127.0.0.1:8080']);
    assert.deepEqual(await checkDestination(new URL('http://127.0.0.1:8080/'), allow, noResolver), [{ address: '127.0.0.1', family: 4 }]);
    await assert.rejects(checkDestination(new URL('http://127.0.0.1:8081/'), allow, noResolver), /loopback/);
    await assert.rejects(checkDestination(new URL('http://2130706433:8081/'), allow, noResolver), /loopback/);
  });

  it('a name entry opens the name, whatever it resolves to, and not another name resolving alike', async () => {
    const allow = parseAllowList(['Intranet.Test']);
    const resolve = resolverOf({ 'intranet.test': ['10.0.0.5'], 'other.test': ['10.0.0.5'] });
    assert.deepEqual(await checkDestination(new URL('http://intranet.test:9000/'), allow, resolve), [{ address: '10.0.0.5', family: 4 }]);
    await assert.rejects(checkDestination(new URL('http://other.test/'), allow, resolve), /private/);
  });

  it('a CIDR range opens the addresses in it, written in any form', async () => {
    const allow = parseAllowList(['10.0.0.0/8', 'fd00::/8']);
    assert.ok(await checkDestination(new URL('http://10.2.3.4/'), allow, noResolver));
    assert.ok(await checkDestination(new URL('http://[::ffff:10.2.3.4]/'), allow, noResolver));
    assert.ok(await checkDestination(new URL('http://[fd00::5]/'), allow, noResolver));
    assert.ok(await checkDestination(new URL('http://ten.test/'), allow, resolverOf({ 'ten.test': ['10.9.9.9'] })));
    await assert.rejects(checkDestination(new URL('http://127.0.0.1/'), allow, noResolver), /loopback/);
  });

  it('an entry that is none of the accepted forms is named in the error', () => {
    for (const entry of ['http://example.org', 'example.org/path', 'a b', 'user@example.org']) {
      assert.throws(() => parseAllowList([entry]), { message: `TOOLS_NETWORK_ALLOW: "${entry}" is neither a host name, a host:port, an IP address nor a CIDR range` });
    }
  });
});
