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

  it('a question repeated while its answer is late is the same question: answered alike, counted once', async () => {
    const late = await startDnsStandIn((_name, questionNumber) => (questionNumber === 1 ? '192.0.2.1' : '127.0.0.1'), {
      answerDelayMs: (name) => (name === 'late.rebind.test' ? 1_100 : 0),
    });
    try {
      const resolveHost = hostResolverOf([late.address]);
      // Prompt answers first: the resolver then waits about a second before asking again (same id, new port).
      for (let index = 0; index < 10; index += 1) await resolveHost(`prompt-${index}.rebind.test`);
      assert.deepEqual(await resolveHost('late.rebind.test'), [{ address: '192.0.2.1', family: 4 }]);
      assert.equal(late.questionsFor('late.rebind.test'), 1);
    } finally {
      late.close();
    }
  });

  it('empty, the system resolver answers', async () => {
    const addresses = await hostResolverOf([])('localhost');
    assert.ok(addresses.some(({ address }) => address === '127.0.0.1' || address === '::1'), JSON.stringify(addresses));
  });
});
