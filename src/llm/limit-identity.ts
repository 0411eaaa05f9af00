import { createHash } from 'node:crypto';
import type { ProviderSpec } from './model-catalog.ts';

/** What a deployment's limits are counted under, and the limits themselves. */
export type LimitIdentity = { readonly id: string; readonly rpm?: number; readonly tpm?: number };

/**
 * A provider's limits belong to the account its API key is of, not to a catalogue entry: deployments of one kind
 * sharing a key (one key behind two entries, say two model families or two priorities) share one limit identity,
 * `key:<hash>` (never the key itself: the identity is stored), with the smallest `rpm` / `tpm` any of them declares. An
 * OpenAI-compatible server is its own machine, so its base URL is part of the identity; a deployment without a key
 * is counted under its own name.
 */
export function limitIdentities(providers: readonly ProviderSpec[], env: Record<string, string | undefined>): Map<string, LimitIdentity> {
  const idOf = new Map(providers.map((provider) => [provider.name, identityId(provider, env)]));
  const limits = new Map<string, { rpm?: number; tpm?: number }>();
  for (const provider of providers) {
    const id = idOf.get(provider.name)!;
    const shared = limits.get(id) ?? {};
    limits.set(id, { rpm: smallest(shared.rpm, provider.rpm), tpm: smallest(shared.tpm, provider.tpm) });
  }
  return new Map(providers.map((provider) => {
    const id = idOf.get(provider.name)!;
    const { rpm, tpm } = limits.get(id)!;
    return [provider.name, Object.freeze({ id, ...(rpm === undefined ? {} : { rpm }), ...(tpm === undefined ? {} : { tpm }) })];
  }));
}

function identityId(provider: ProviderSpec, env: Record<string, string | undefined>): string {
  const key = provider.apiKeyEnv === undefined ? undefined : env[provider.apiKeyEnv];
  if (!key || provider.kind === 'mock') return provider.name;
  const server = provider.kind === 'openai-compatible' ? (provider.baseUrlEnv === undefined ? '' : env[provider.baseUrlEnv] ?? '') : '';
  return `key:${createHash('sha256').update([provider.kind, server, key].join('\0')).digest('hex').slice(0, 16)}`;
}

const smallest = (left: number | undefined, right: number | undefined) =>
  (left === undefined ? right : right === undefined ? left : Math.min(left, right));
