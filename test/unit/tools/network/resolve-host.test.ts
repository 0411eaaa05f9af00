import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../../src/config.ts';
import { hostResolverOf } from '../../../../src/tools/network/resolve-host.ts';
import { startDnsStandIn, type DnsStandIn } from '../../../fixtures/dns-stand-in.ts';

describe('TOOLS_DNS_SERVERS', () => {
  let dns: DnsStandIn;
  before(async () => { dns = await startDnsStandIn((name) => (name === 'known.test' ? '192.0.2.7' : undefined)); });
  after(() => dns.close());

  it('lists IP addresses with optional ports; anything else stops start-up naming the variable', () => {
    assert.deepEqual(loadConfig({ TOOLS_DNS_SERVERS: ' 10.0.0.53 , 10.0.0.53:5353,[fd00::53]:5353,' }).network.dnsServers, ['10.0.0.53', '10.0.0.53:5353', '[fd00::53]:5353']);
    for (const bad of ['dns.example', '10.0.0.53:99999', '10.0.0']) {
      assert.throws(() => loadConfig({ TOOLS_DNS_SERVERS: bad }), (error: unknown) => error instanceof ConfigError && /^ {2}TOOLS_DNS_SERVERS: /m.test(error.message), bad);
    }
  });

  it('names are asked of those servers, not of the system', async () => {
    const resolveHost = hostResolverOf([dns.address]);
    assert.deepEqual(await resolveHost('known.test'), [{ address: '192.0.2.7', family: 4 }]);
    assert.equal(dns.questionsFor('known.test'), 1);
    // The system resolver knows localhost; these servers do not.
    await assert.rejects(resolveHost('localhost'), { code: 'ENOTFOUND' });
    assert.equal(dns.questionsFor('localhost'), 1);
  });

  it('empty, the system resolver answers', async () => {
    const addresses = await hostResolverOf([])('localhost');
    assert.ok(addresses.some(({ address }) => address === '127.0.0.1' || address === '::1'), JSON.stringify(addresses));
  });
});
