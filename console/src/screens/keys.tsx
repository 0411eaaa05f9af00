import { useEffect, useState } from 'preact/hooks';
import { api, type KeyBody, type KeyList, type Me, type NewKey } from '../api/client';
import { formatAge } from '../format';
import { canManageKeys } from './keys-access';

type Key = KeyList['api_keys'][number];
type Scope = NonNullable<KeyBody['scopes']>[number];

const SCOPES: Scope[] = ['tasks:read', 'tasks:write', 'sessions:read', 'sessions:write', 'keys:manage', 'skills:dangerous', 'tools:dangerous'];
const DEFAULT_SCOPES = new Set<Scope>(['tasks:read', 'tasks:write', 'sessions:read', 'sessions:write']);


export function KeysScreen({ me }: { me: Me }) {
  if (!canManageKeys(me)) {
    return (
      <>
        <h1>API keys</h1>
        <p data-testid="keys-refused">Managing API keys needs the <code>keys:manage</code> permission, which your role or key does not have. Ask an owner or admin of your organisation.</p>
      </>
    );
  }
  return <KeyManager me={me} />;
}

function KeyManager({ me }: { me: Me }) {
  const [list, setList] = useState<KeyList | null>(null);
  const [error, setError] = useState('');
  const [secret, setSecret] = useState<NewKey | null>(null);
  const load = () => api<KeyList>('GET', '/api/v1/auth/api-keys').then((answer) => { setList(answer); setError(''); }, (failure: Error) => setError(failure.message));
  useEffect(() => { void load(); }, []);
  const shown = (key: NewKey) => { setSecret(key); void load(); };
  const admin = me.role === 'owner' || me.role === 'admin';
  return (
    <>
      <h1>API keys</h1>
      <p class="hint">{admin ? 'The keys of everyone in your organisation.' : 'Your own keys.'}</p>
      {secret && <SecretOnce created={secret} onDismiss={() => setSecret(null)} />}
      <div class="columns">
        <CreateKey onCreated={shown} />
        <section class="card grow" aria-labelledby="key-list-title">
          <h2 id="key-list-title">Keys</h2>
          {error && <p role="alert" class="error">{error}</p>}
          {!list && !error && <p role="status">Loading keys…</p>}
          {list && list.api_keys.length === 0 && <p>No keys yet.</p>}
          {list && list.api_keys.length > 0 && (
            <div class="table-wrap">
              <table>
                <thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Scopes</th><th scope="col">Last used</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
                <tbody>{list.api_keys.map((key) => <KeyRow key={key.id} apiKey={key} current={key.id === me.api_key_id} onRotated={shown} onChanged={load} />)}</tbody>
              </table>
            </div>
          )}
        </section>
      </div>
    </>
  );
}

/** The new secret, shown this once: the gateway keeps only its hash. */
function SecretOnce({ created, onDismiss }: { created: NewKey; onDismiss: () => void }) {
  return (
    <section class="card secret" role="alert" aria-labelledby="secret-title">
      <h2 id="secret-title">Copy the secret of “{created.name}” now</h2>
      <p>It is shown only this once; the gateway keeps only a hash of it.</p>
      <label>Secret<input data-testid="new-key-secret" readOnly value={created.key} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} /></label>
      <button type="button" onClick={onDismiss}>I have copied it</button>
    </section>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: NewKey) => void }) {
  const [error, setError] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const body: KeyBody = {
      name: String(form.get('name') ?? '').trim(),
      scopes: SCOPES.filter((scope) => form.get(`scope:${scope}`) !== null),
      environment: form.get('environment') === 'test' ? 'test' : 'live',
    };
    const expires = String(form.get('expires') ?? '');
    if (expires) body.expires_at = new Date(`${expires}T23:59:59`).toISOString();
    setError('');
    try {
      onCreated(await api<NewKey>('POST', '/api/v1/auth/api-keys', body));
      formElement.reset();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  return (
    <form class="card stack" onSubmit={submit} aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key</h2>
      {error && <p role="alert" class="error">{error}</p>}
      <label>Key name<input name="name" maxLength={100} required autocomplete="off" /></label>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label class="inline check" key={scope}><input type="checkbox" name={`scope:${scope}`} defaultChecked={DEFAULT_SCOPES.has(scope)} />{scope}</label>
        ))}
      </fieldset>
      <label>Environment
        <select name="environment"><option value="live">live</option><option value="test">test</option></select>
      </label>
      <label>Expires on (optional)<input name="expires" type="date" /></label>
      <button type="submit">Create key</button>
    </form>
  );
}

function KeyRow({ apiKey, current, onRotated, onChanged }: { apiKey: Key; current: boolean; onRotated: (key: NewKey) => void; onChanged: () => Promise<unknown> }) {
  const [confirming, setConfirming] = useState<'' | 'rotate' | 'revoke'>('');
  const [error, setError] = useState('');
  const act = async (run: () => Promise<void>) => {
    try {
      await run();
      setConfirming('');
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  const rotate = () => act(async () => onRotated(await api<NewKey>('POST', '/api/v1/auth/api-keys/refresh', { id: apiKey.id })));
  const revoke = () => act(async () => { await api('DELETE', `/api/v1/auth/api-keys/${encodeURIComponent(apiKey.id)}`); await onChanged(); });
  const revoked = apiKey.revoked_at !== null;
  const expired = apiKey.expires_at !== null && Date.parse(apiKey.expires_at) < Date.now();
  return (
    <tr data-key-id={apiKey.id}>
      <td>{apiKey.name}{current && <span class="hint"> (this session)</span>}</td>
      <td><code>{apiKey.prefix}…</code></td>
      <td>{apiKey.scopes.join(', ')}</td>
      <td>{apiKey.last_used_at ? formatAge(apiKey.last_used_at) : 'never'}</td>
      <td data-testid="key-state">{revoked ? 'revoked' : expired ? 'expired' : 'active'}</td>
      <td>
        {!revoked && (
          <div class="row wrap">
            {confirming === 'rotate'
              ? <button type="button" onClick={rotate}>Really rotate</button>
              : <button type="button" onClick={() => setConfirming('rotate')} aria-label={`Rotate ${apiKey.name}`}>Rotate</button>}
            {confirming === 'revoke'
              ? <button type="button" class="danger" onClick={revoke}>Really revoke</button>
              : <button type="button" class="danger" onClick={() => setConfirming('revoke')} aria-label={`Revoke ${apiKey.name}`}>Revoke</button>}
          </div>
        )}
        {error && <p role="alert" class="error">{error}</p>}
      </td>
    </tr>
  );
}
