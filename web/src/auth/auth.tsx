import { browserSupportsWebAuthn, startAuthentication, WebAuthnError } from '@simplewebauthn/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api/client';
import { logIn, logInWithPasskey, passkeyLoginOptions, signUp, type User } from './api';
import { PasswordRules } from './password-rules';

/** `ended`: the session ended by itself (signed out elsewhere, or the refresh cookie refused), not by Log out. */
export function AuthScreen({
  mode,
  onSignedIn,
  ended = false,
}: {
  mode: 'login' | 'signup';
  onSignedIn: (user: User) => void;
  ended?: boolean;
}) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  /** Set once the server said this account needs a second factor: the form then asks for it. */
  const [code, setCode] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const codeInput = useRef<HTMLInputElement>(null);
  const signup = mode === 'signup';

  useEffect(() => {
    if (code === '') codeInput.current?.focus();
  }, [code === '']);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError('');
    setBusy(true);
    try {
      if (signup) await signUp(username, password);
      onSignedIn(await logIn({ username, password, ...(code === null ? {} : { code }) }));
    } catch (e) {
      if (e instanceof ApiError && (e.body as { code?: string } | null)?.code === 'mfa_required') {
        setCode('');
      } else {
        setError(errorMessage(e));
      }
    } finally {
      setBusy(false);
    }
  };

  const withPasskey = async () => {
    setError('');
    setBusy(true);
    try {
      const options = await passkeyLoginOptions();
      const credential = await startAuthentication({
        optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
      });
      onSignedIn(await logInWithPasskey(credential));
    } catch (e) {
      setError(passkeyMessage(e, 'sign in'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="auth">
      <h1>{signup ? 'Create your Vellum account' : 'Log in to Vellum'}</h1>
      <p class="intro">
        Vellum is a private notebook on your own server: notes in Markdown, every version kept, found as you type,
        shared by link when you choose.
      </p>
      {ended && !signup && (
        <p class="notice" role="status">
          Your session has ended. Log in again to go on: unsaved text stays on this device and is offered back.
        </p>
      )}
      <form onSubmit={submit} noValidate>
        <label for="username">Username</label>
        <input
          id="username"
          name="username"
          autoComplete={signup ? 'username' : 'username webauthn'}
          autoCapitalize="none"
          spellcheck={false}
          value={username}
          onInput={(e) => {
            setUsername(e.currentTarget.value);
            setCode(null);
          }}
          required
          aria-describedby={signup ? 'username-rule' : undefined}
        />
        {signup && (
          <p id="username-rule" class="hint">
            3 to 32 letters, digits, “_”, “.” or “-”.
          </p>
        )}
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete={signup ? 'new-password' : 'current-password'}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
          aria-describedby={signup ? 'password-rules' : undefined}
        />
        {signup && <PasswordRules password={password} id="password-rules" />}
        {code !== null && (
          <>
            <label for="one-time-code">One-time code</label>
            <input
              id="one-time-code"
              ref={codeInput}
              name="code"
              autoComplete="one-time-code"
              inputMode="text"
              autoCapitalize="none"
              spellcheck={false}
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
              aria-describedby="one-time-code-hint"
              maxLength={64}
            />
            <p id="one-time-code-hint" class="hint">
              The 6-digit code from your authenticator app, or one of your recovery codes.
            </p>
          </>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {signup ? 'Sign up' : code === null ? 'Log in' : 'Verify and log in'}
        </button>
      </form>
      {!signup && browserSupportsWebAuthn() && (
        <p>
          <button type="button" class="secondary" disabled={busy} onClick={withPasskey}>
            Sign in with a passkey
          </button>
        </p>
      )}
      <p>
        {signup ? (
          <>
            Already have an account? <a href="/login">Log in</a>
          </>
        ) : (
          <>
            New here? <a href="/signup">Create an account</a>
          </>
        )}
      </p>
    </main>
  );
}

/** What went wrong with a passkey, in words: the browser's own errors are technical or silent. */
export function passkeyMessage(error: unknown, action: 'sign in' | 'add it'): string {
  if (error instanceof WebAuthnError || (error instanceof Error && error.name === 'NotAllowedError')) {
    return action === 'sign in'
      ? 'Passkey sign-in was cancelled or timed out, or this device has no passkey for Vellum.'
      : 'Adding the passkey was cancelled or timed out, or this device already holds one for your account.';
  }
  if (error instanceof ApiError && error.status === 401 && action === 'sign in')
    return 'That passkey is not registered with Vellum any more.';
  return errorMessage(error);
}
