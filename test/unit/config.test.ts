import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

test('defaults give the embedded development footprint', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.dataDir, path.resolve('data'));
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.environment, 'development');
  assert.equal(config.skipAuth, true);
  assert.equal(config.agentTimeoutSeconds, 600);
  assert.ok(Object.isFrozen(config));
});

test('every bad variable is reported at once, naming it', () => {
  assert.throws(() => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /PORT/);
    assert.match(error.message, /LOG_LEVEL/);
    assert.match(error.message, /DATABASE_URL/);
    return true;
  });
});

test('skip-auth defaults off outside development and follows GATEWAY_SKIP_AUTH otherwise', () => {
  assert.equal(loadConfig({ GATEWAY_ENV: 'production', JWT_SECRET: 'x'.repeat(40) }).skipAuth, false);
  assert.equal(loadConfig({ GATEWAY_ENV: 'test' }).skipAuth, false);
  assert.equal(loadConfig({ GATEWAY_SKIP_AUTH: '0' }).skipAuth, false);
  assert.equal(loadConfig({ PORT: '9000', DATABASE_URL: 'postgres://u@h/db' }).port, 9000);
});

test('provider credentials reach the model registry under any name models.yaml gives them', () => {
  const config = loadConfig({ OPENAI_API_KEY: 'sk-x', AZURE_OPENAI_KEY: 'az-y', VLLM_URL: 'http://127.0.0.1:8000/v1' });
  assert.equal(config.providerEnv.OPENAI_API_KEY, 'sk-x');
  assert.equal(config.providerEnv.AZURE_OPENAI_KEY, 'az-y');
  assert.equal(config.providerEnv.VLLM_URL, 'http://127.0.0.1:8000/v1');
});

test('traces are on only when an exporter or an OTLP endpoint is named, and the SDK is not disabled', () => {
  assert.equal(loadConfig({}).tracing.enabled, false);
  assert.equal(loadConfig({ OTEL_SERVICE_NAME: 'gateway' }).tracing.enabled, false);
  assert.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing.enabled, true);
  assert.equal(loadConfig({ OTEL_TRACES_EXPORTER: ' console ' }).tracing.enabled, true);
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing.enabled, true);
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing.enabled, true);
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }).tracing.enabled, false);
  assert.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing.enabled, false);
  assert.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'none,otlp' }).tracing.enabled, false);
  assert.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp,none' }).tracing.enabled, true);
  assert.equal(loadConfig({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' }).tracing.enabled, false);
  assert.equal(loadConfig({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).tracing.enabled, true);
});

test('the trace sampler is the SDK\'s default unless named, and a bad one is refused only while traces are on', () => {
  const on = { OTEL_TRACES_EXPORTER: 'otlp' };
  assert.deepEqual(loadConfig(on).tracing.sampler, { name: 'parentbased_always_on', ratio: 1 });
  assert.deepEqual(loadConfig({ ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }).tracing.sampler,
    { name: 'parentbased_traceidratio', ratio: 0 });
  assert.throws(() => loadConfig({ ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' }), /OTEL_TRACES_SAMPLER: must be one of always_on, .* \(it is jaeger_remote\)/);
  assert.throws(() => loadConfig({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }), /OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/);
  assert.throws(() => loadConfig({ ...on, OTEL_TRACES_SAMPLER_ARG: 'half' }), /OTEL_TRACES_SAMPLER_ARG/);
  assert.equal(loadConfig({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }).tracing.enabled, false, 'another service\'s setting does not stop a gateway without traces');
});

test('skip-auth outside development and a missing JWT secret in production are refused', () => {
  assert.throws(() => loadConfig({ GATEWAY_ENV: 'test', GATEWAY_SKIP_AUTH: '1' }), /GATEWAY_SKIP_AUTH/);
  assert.throws(() => loadConfig({ GATEWAY_ENV: 'production' }), /JWT_SECRET/);
  assert.throws(() => loadConfig({ JWT_SECRET: 'short' }), /JWT_SECRET/);
});

test('metrics settings: no protection by default, a listener on METRICS_HOST (else HOST), and the bad values named', () => {
  assert.deepEqual({ ...loadConfig({}).metrics }, { token: undefined, port: undefined, host: '0.0.0.0' });
  assert.deepEqual({ ...loadConfig({ HOST: '127.0.0.1', METRICS_PORT: '9464' }).metrics }, { token: undefined, port: 9464, host: '127.0.0.1' });
  assert.equal(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metrics.host, '10.0.0.5');
  assert.equal(loadConfig({ METRICS_TOKEN: 't'.repeat(16) }).metrics.token, 't'.repeat(16));
  assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
  assert.throws(() => loadConfig({ METRICS_PORT: 'ninety' }), /METRICS_PORT/);
  assert.throws(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' }), /METRICS_PORT: must differ from PORT/);
  assert.equal(loadConfig({ PORT: '0', METRICS_PORT: '0' }).metrics.port, 0);
});
