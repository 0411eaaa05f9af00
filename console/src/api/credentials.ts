/**
 * The caller's credential lives in sessionStorage only: it goes when the tab closes, and nothing is kept on
 * disk. An access token comes with its refresh token; a pasted API key stands alone.
 */
export type Credential =
  | { kind: 'token'; accessToken: string; refreshToken: string }
  | { kind: 'key'; apiKey: string };

const STORAGE_KEY = 'agentgate.console.credential';

export function loadCredential(): Credential | null {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (!stored) return null;
  try {
    return JSON.parse(stored) as Credential;
  } catch {
    return null;
  }
}

export function saveCredential(credential: Credential | null): void {
  if (credential) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export function credentialHeaders(credential: Credential | null): Record<string, string> {
  if (!credential) return {};
  return credential.kind === 'key' ? { 'X-API-Key': credential.apiKey } : { Authorization: `Bearer ${credential.accessToken}` };
}
