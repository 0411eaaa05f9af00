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

test('provider credentials are passed through for the model registry', () => {
  const config = loadConfig({ OPENAI_API_KEY: 'sk-x', UNRELATED: 'y' });
  assert.equal(config.providerEnv.OPENAI_API_KEY, 'sk-x');
  assert.equal(config.providerEnv.UNRELATED, undefined);
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

test('skip-auth outside development and a missing JWT secret in production are refused', () => {
  assert.throws(() => loadConfig({ GATEWAY_ENV: 'test', GATEWAY_SKIP_AUTH: '1' }), /GATEWAY_SKIP_AUTH/);
  assert.throws(() => loadConfig({ GATEWAY_ENV: 'production' }), /JWT_SECRET/);
  assert.throws(() => loadConfig({ JWT_SECRET: 'short' }), /JWT_SECRET/);
});
