import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APICallError } from '@ai-sdk/provider';
import { classifyProviderError, readRetryAfter, streamErrorOf } from '../../../src/llm/provider-errors.ts';

const apiError = (statusCode: number, message = 'failed', responseHeaders: Record<string, string> = {}, responseBody = message) =>
  new APICallError({ message, url: 'http://127.0.0.1/v1', requestBodyValues: {}, statusCode, responseHeaders, responseBody });

test('the provider\'s wait is read from retry-after-ms, Retry-After (seconds or a date) and x-ratelimit-reset-*, the longest winning', () => {
  assert.equal(readRetryAfter({ 'retry-after-ms': '1500' }), 1500);
  assert.equal(readRetryAfter({ 'retry-after': '2' }), 2000);
  assert.equal(readRetryAfter({ 'x-ratelimit-reset-requests': '1m30s', 'retry-after': '3' }), 90_000);
  assert.equal(readRetryAfter({ 'x-ratelimit-reset-tokens': '250ms' }), 250);
  const inAMinute = new Date(Date.now() + 60_000).toUTCString();
  assert.ok(readRetryAfter({ 'retry-after': inAMinute })! > 55_000);
  assert.equal(readRetryAfter({}), undefined);
  assert.equal(readRetryAfter({ 'retry-after': 'soon' }), undefined);
});

test('failures are classified by status and message', () => {
  assert.deepEqual(classifyProviderError(apiError(429, 'slow down', { 'retry-after': '4' })), { kind: 'transient', reason: 'rate limited (HTTP 429)', retryAfterMs: 4000 });
  assert.equal(classifyProviderError(apiError(529, 'Overloaded')).reason, 'overloaded (HTTP 529)');
  assert.equal(classifyProviderError(apiError(503)).kind, 'transient');
  assert.equal(classifyProviderError(apiError(401)).kind, 'deployment');
  assert.equal(classifyProviderError(apiError(404)).kind, 'deployment');
  assert.equal(classifyProviderError(apiError(400, 'Invalid value for temperature')).kind, 'request');
  assert.equal(classifyProviderError(apiError(400, 'Your request was flagged by our content policy')).reason, 'refused by content policy (HTTP 400)');
  assert.equal(classifyProviderError(apiError(400, 'prompt is too long: 210000 tokens > 200000 maximum')).kind, 'context_length');
  assert.equal(classifyProviderError(new TypeError('terminated')).kind, 'transient');
  assert.equal(classifyProviderError(new Error('scripted mock failure')).kind, 'deployment');
});

test('an error the provider sent inside a stream is classified by its type and code, not taken for a dropped connection', () => {
  const classify = (sent: unknown) => classifyProviderError(streamErrorOf(sent));
  assert.deepEqual(classify({ type: 'overloaded_error', message: 'Overloaded' }), { kind: 'transient', reason: 'overloaded (error event in the stream: overloaded_error)' });
  assert.equal(classify({ type: 'rate_limit_error', message: 'slow down' }).reason, 'rate limited (error event in the stream: rate_limit_error)');
  assert.equal(classify({ type: 'api_error', message: 'Internal server error' }).kind, 'transient');
  assert.equal(classify({ message: 'The server had an error', type: 'server_error', code: null, param: null }).kind, 'transient');
  // The OpenAI Responses provider's shape: type, code and the status the error stands for.
  assert.equal(classify({ message: 'Slow down', type: 'tokens', code: 'rate_limit_exceeded', statusCode: 429 }).kind, 'transient');
  assert.equal(classify({ type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' }).kind, 'request');
  assert.equal(classify({ type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' }).kind, 'context_length');
  assert.equal(classify({ type: 'authentication_error', message: 'invalid x-api-key' }).kind, 'deployment');
  assert.equal(classify({ message: 'Your request was flagged by our content policy', type: 'invalid_request_error', code: 'content_policy_violation' }).reason, 'refused by content policy (error event in the stream: invalid_request_error, content_policy_violation)');
  assert.equal(classify({ type: 'something_new', message: 'unheard of' }).kind, 'transient');
  assert.equal(streamErrorOf({ type: 'overloaded_error' }).message, 'the provider sent an error in the stream');
  assert.equal(streamErrorOf('a bare string').message, 'a bare string');
  const thrown = new TypeError('terminated');
  assert.equal(streamErrorOf(thrown), thrown, 'an Error is thrown as it is');
});

test('Google\'s wait in the body of its 429 (google.rpc.RetryInfo) is honoured like a Retry-After header', () => {
  const body = JSON.stringify({
    error: {
      code: 429, status: 'RESOURCE_EXHAUSTED', message: 'You exceeded your current quota, please check your plan and billing details.',
      details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] }, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }],
    },
  });
  assert.deepEqual(classifyProviderError(apiError(429, 'Resource exhausted', {}, body)), { kind: 'transient', reason: 'rate limited (HTTP 429)', retryAfterMs: 37_000 });
  assert.equal(classifyProviderError(apiError(429, 'Resource exhausted', { 'retry-after': '2' }, body)).retryAfterMs, 2000, 'a header wins');
  assert.equal(classifyProviderError(apiError(429, 'Resource exhausted', {}, '{"error": RetryInfo not JSON')).retryAfterMs, undefined);
});

test('an OpenAI account out of credit (429 insufficient_quota) is not retried: the next candidate is tried', () => {
  const body = JSON.stringify({ error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } });
  assert.deepEqual(classifyProviderError(apiError(429, 'You exceeded your current quota', {}, body)), { kind: 'deployment', reason: 'quota exhausted (HTTP 429, insufficient_quota)' });
});
