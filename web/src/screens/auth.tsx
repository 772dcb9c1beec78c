import { useState } from 'preact/hooks';
import { api, errorMessage, session, unwrap, type User } from '../api/client';
import { PasswordRules } from '../components/password-rules';

export function AuthScreen({ mode, onSignedIn }: { mode: 'login' | 'signup'; onSignedIn: (user: User) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const signup = mode === 'signup';

  const submit = async (event: Event) => {
    event.preventDefault();
    setError('');
    setBusy(true);
    try {
      if (signup) unwrap(await api.POST('/api/auth/signup', { body: { username, password } }));
      const result = unwrap(await api.POST('/api/auth/login', { body: { username, password }, params: { query: { includeUser: 'true' } } }));
      session.setAccessToken(result.access_token);
      onSignedIn(result.user!);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="auth">
      <h1>{signup ? 'Create your Vellum account' : 'Log in to Vellum'}</h1>
      <form onSubmit={submit} noValidate>
        <label for="username">Username</label>
        <input id="username" name="username" autoComplete="username" autoCapitalize="none" spellcheck={false}
          value={username} onInput={(e) => setUsername(e.currentTarget.value)} required
          aria-describedby={signup ? 'username-rule' : undefined} />
        {signup && <p id="username-rule" class="hint">3 to 32 letters, digits, “_”, “.” or “-”.</p>}
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autoComplete={signup ? 'new-password' : 'current-password'}
          value={password} onInput={(e) => setPassword(e.currentTarget.value)} required
          aria-describedby={signup ? 'password-rules' : undefined} />
        {signup && <PasswordRules password={password} id="password-rules" />}
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{signup ? 'Sign up' : 'Log in'}</button>
      </form>
      <p>
        {signup ? <>Already have an account? <a href="/login">Log in</a></> : <>New here? <a href="/signup">Create an account</a></>}
      </p>
    </main>
  );
}
