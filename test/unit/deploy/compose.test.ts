import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig, type ProcessRole } from '../../../src/config.ts';
import { documentedSettings, mainArgumentProblem, SHUTDOWN_DRAIN_SECONDS } from '../../helpers/deploy/app-facts.ts';
import { composeProblems, parseCompose } from '../../helpers/deploy/compose.ts';
import { readImage } from '../../helpers/deploy/dockerfile.ts';
import { readRepoFile, ROOT } from '../../helpers/deploy/repo-files.ts';

const compose = parseCompose(readRepoFile('deploy/compose.yaml'));
const image = readImage(readRepoFile('Dockerfile'));
const packageJson = JSON.parse(readRepoFile('package.json'));

/** The services built from this repository, i.e. agentgate processes. */
const agentgateServices = Object.entries<any>(compose.services).filter(([, service]) => service.build);
const servers = agentgateServices.filter(([, service]) => service.command[0] === 'serve');
const roleOf = (service: any): ProcessRole => service.command[service.command.indexOf('--role') + 1];

/** Values for the variables the file makes the operator set (`${NAME:?message}`), as Compose would substitute them. */
const OPERATOR_VALUES: Record<string, string> = { POSTGRES_PASSWORD: 'a3f1c2', JWT_SECRET: 'f'.repeat(64) };
function interpolate(value: string): string {
  const result = value.replace(/\$\{(\w+):\?[^}]*\}/g, (_match, name: string) => OPERATOR_VALUES[name]);
  assert.doesNotMatch(result, /\$/, `a variable form this test does not substitute: ${value}`);
  return result;
}

/** What a container of the service sees: the image's ENV, then the service's environment. */
function containerEnv(service: any): Record<string, string> {
  const environment = Object.entries<string>(service.environment ?? {}).map(([name, value]) => [name, interpolate(String(value))]);
  return { ...image.env, ...Object.fromEntries(environment) };
}

describe('deploy/compose.yaml', () => {
  it('is valid against the Compose Specification schema', () => {
    assert.deepEqual(composeProblems(compose), []);
  });

  it('a copy with a misspelt field or an unknown dependency condition is refused', () => {
    const broken = structuredClone(compose);
    broken.services.gateway.healthcheck.intervall = '10s';
    broken.services['worker-1'].depends_on.migrate.condition = 'service_done';
    const problems = composeProblems(broken);
    assert.ok(problems.some((problem) => problem.includes('/services/gateway/healthcheck') && problem.includes('intervall')), problems.join('\n'));
    assert.ok(problems.some((problem) => problem.includes('/services/worker-1/depends_on/migrate/condition')), problems.join('\n'));
  });

  it('runs PostgreSQL, a migration, one gateway and two workers, all from this repository\'s image', () => {
    assert.deepEqual(servers.map(([, service]) => roleOf(service)).sort(), ['gateway', 'worker', 'worker']);
    assert.deepEqual(agentgateServices.map(([name]) => name).sort(), ['gateway', 'migrate', 'worker-1', 'worker-2']);
    for (const [name, service] of agentgateServices) {
      assert.equal(mainArgumentProblem(service.command), undefined, name);
      assert.equal(path.resolve(ROOT, 'deploy', service.build.context), ROOT, `${name} builds the repository's Dockerfile`);
      assert.equal(service.image, `agentgate:${packageJson.version}`, name);
    }
  });

  it('gives every server its own stable engine identity', () => {
    const identities = servers.map(([, service]) => service.environment.EXECUTOR_ID);
    assert.ok(identities.every(Boolean));
    assert.equal(new Set(identities).size, servers.length);
  });

  it('gives every agentgate container settings that pass the production checks, on the compose PostgreSQL', () => {
    const settingNames = documentedSettings();
    for (const [name, service] of agentgateServices) {
      const env = containerEnv(service);
      for (const variable of Object.keys(service.environment)) assert.ok(settingNames.has(variable), `${name}: ${variable} is a documented setting`);
      const config = loadConfig(env, service.command[0] === 'serve' ? roleOf(service) : 'all');
      assert.equal(config.environment, 'production', name);
      assert.equal(new URL(config.databaseUrl!).host, 'postgres:5432', `${name} uses the postgres service`);
      assert.equal(new URL(config.databaseUrl!).password, OPERATOR_VALUES.POSTGRES_PASSWORD);
    }
  });

  it('starts the migration once PostgreSQL is healthy, and the servers once it has succeeded', () => {
    assert.ok(compose.services.postgres.healthcheck.test.includes('pg_isready'));
    assert.equal(compose.services.migrate.depends_on.postgres.condition, 'service_healthy');
    assert.equal(compose.services.migrate.restart, 'no');
    for (const [name, service] of servers) assert.equal(service.depends_on.migrate.condition, 'service_completed_successfully', name);
  });

  it('keeps PostgreSQL\'s data in a named volume where its image stores it', () => {
    const postgres = compose.services.postgres;
    const major = Number(/^postgres:(\d+)/.exec(postgres.image)![1]);
    // From PostgreSQL 18 on, the image keeps its data under /var/lib/postgresql/<major>/docker; a volume on the
    // older /var/lib/postgresql/data would not be used.
    const dataPath = major >= 18 ? '/var/lib/postgresql' : '/var/lib/postgresql/data';
    const [volume, target] = postgres.volumes[0].split(':');
    assert.equal(target, dataPath);
    assert.ok(volume in compose.volumes, `${volume} is a named volume`);
  });

  it('checks the gateway\'s readiness on the port it publishes', () => {
    const gateway = compose.services.gateway;
    assert.deepEqual(gateway.healthcheck.test, ['CMD', 'node', 'deploy/probe.ts', '/readiness']);
    const port = String(loadConfig(containerEnv(gateway), 'gateway').port);
    assert.deepEqual(gateway.ports, [`${port}:${port}`]);
  });

  it('checks each worker\'s readiness on its own port, and publishes no worker port', () => {
    for (const [name, service] of servers.filter(([, service]) => roleOf(service) === 'worker')) {
      assert.deepEqual(service.healthcheck.test, ['CMD', 'node', 'deploy/probe.ts', '/readiness'], name);
      assert.equal(service.ports, undefined, name);
    }
  });

  it('lets a stopping server drain before Docker kills it', () => {
    for (const [name, service] of servers) {
      assert.ok(Number(/^(\d+)s$/.exec(service.stop_grace_period)![1]) > SHUTDOWN_DRAIN_SECONDS, name);
    }
  });

  it('leaves PostgreSQL enough connections for every process\'s pools', () => {
    const maxConnections = Number(/max_connections=(\d+)/.exec(compose.services.postgres.command.join(' '))![1]);
    const needed = agentgateServices.reduce((sum, [, service]) => {
      const config = loadConfig(containerEnv(service));
      // The pool, the engine's pool, and the event and engine listeners.
      return sum + config.databasePool.size + config.enginePoolSize + 3;
    }, 0);
    assert.ok(needed <= maxConnections, `${needed} connections needed, ${maxConnections} allowed`);
  });
});
