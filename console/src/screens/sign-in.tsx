import { useState } from 'preact/hooks';
import { saveCredential } from '../api/credentials';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const withPassword = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError('');
    try {
      const response = await fetch('/api/v1/auth/login', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: form.get('email'), password: form.get('password') }),
      });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(typeof body?.error === 'string' ? body.error : 'Sign-in failed');
      saveCredential({ kind: 'token', accessToken: body.access_token, refreshToken: body.refresh_token });
      onSignedIn();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const withKey = (event: Event) => {
    event.preventDefault();
    const key = String(new FormData(event.currentTarget as HTMLFormElement).get('api_key') ?? '').trim();
    if (!key) return setError('Paste an API key');
    saveCredential({ kind: 'key', apiKey: key });
    onSignedIn();
  };

  return (
    <main id="main" class="page narrow">
      <h1>Sign in to agentgate</h1>
      {error && <p role="alert" class="error">{error}</p>}
      <form class="card stack" onSubmit={withPassword}>
        <h2>With your account</h2>
        <label>Email<input name="email" type="email" autocomplete="username" required /></label>
        <label>Password<input name="password" type="password" autocomplete="current-password" required /></label>
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      <form class="card stack" onSubmit={withKey}>
        <h2>With an API key</h2>
        <label>API key<input name="api_key" type="password" autocomplete="off" /></label>
        <button type="submit">Use this key</button>
      </form>
      <p class="hint">Your sign-in is kept for this browser tab only.</p>
    </main>
  );
}
