import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api/client';
import { useResource } from '../api/resource';
import { authConfig, completeSetup, logIn, logInWithPasskey, passkeyLoginOptions, signUp, type User } from './api';
import { PasswordRules } from './password-rules';

/** `ended`: the session ended by itself (signed out elsewhere, or the refresh cookie refused), not by Log out. */
export function AuthScreen({
  mode,
  onSignedIn,
  ended = false,
  deleted = false,
}: {
  /** setup: an account an administrator created chooses its password (`/setup?token=…`). */
  mode: 'login' | 'signup' | 'setup';
  onSignedIn: (user: User) => void;
  ended?: boolean;
  /** The account was just deleted (Account, Delete account): the page says it is done. */
  deleted?: boolean;
}) {
  // What this server allows (GET /auth/config): sign-up only where it may work.
  const config = useResource((signal) => authConfig(signal), []);
  const params = new URLSearchParams(location.search);
  const invitation = params.get('invitation') ?? undefined;
  /** Why single sign-on sent the browser back here (GET /auth/oidc/callback): a code, worded here. */
  const ssoError = ssoErrorMessage(params.get('sso_error'));
  const setupToken = params.get('token') ?? '';
  const signupMode = config.data?.signup ?? 'open';
  const signupOffered = signupMode === 'open' || invitation !== undefined;
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  /** Set once the server said this account needs a second factor: the form then asks for it. */
  const [code, setCode] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const codeInput = useRef<HTMLInputElement>(null);
  const signup = mode === 'signup';
  const setup = mode === 'setup';
  /** Single sign-on's button label (null: none), and whether passwords sign in (GET /auth/config). */
  const offer = { sso: config.data?.oidc?.name ?? null, passwords: config.data?.password_login ?? true };
  /**
   * PASSWORD_LOGIN=off: no password would sign a new account in, so sign-up offers single sign-on
   * only (the server refuses a password sign-up but for an administrator's invitation).
   */
  const passwordForm = !(signup && !offer.passwords);

  useEffect(() => {
    if (code === '') codeInput.current?.focus();
  }, [code === '']);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError('');
    setBusy(true);
    try {
      if (setup) {
        onSignedIn(await completeSetup(setupToken, password));
        return;
      }
      if (signup) await signUp(username, password, invitation);
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
      const [{ startAuthentication }, options] = await Promise.all([import('./passkey'), passkeyLoginOptions()]);
      const credential = await startAuthentication({
        optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
      });
      onSignedIn(await logInWithPasskey(credential));
    } catch (e) {
      setError(
        await import('./passkey').then(
          ({ passkeyMessage }) => passkeyMessage(e, 'sign in'),
          () => errorMessage(e),
        ),
      );
    } finally {
      setBusy(false);
    }
  };

  if (signup && config.data !== undefined && !signupOffered) {
    return (
      <main id="main" class="auth">
        <h1>Create your Vellum account</h1>
        <p role="status">
          {signupMode === 'closed'
            ? 'Sign-up is closed on this server: an administrator creates accounts.'
            : 'Sign-up on this server needs an invitation: open the link an administrator gave you.'}
        </p>
        <p>
          Already have an account? <a href="/login">Log in</a>
        </p>
      </main>
    );
  }

  return (
    <main id="main" class="auth">
      <h1>{setup ? 'Choose your password' : signup ? 'Create your Vellum account' : 'Log in to Vellum'}</h1>
      {!setup && (
        <p class="intro">
          Vellum is a private notebook on your own server: notes in Markdown, every version kept, found as you type,
          shared by link when you choose.
        </p>
      )}
      {signup && invitation !== undefined && (
        <p class="notice" role="status">
          {passwordForm
            ? 'You were invited: choose a username and a password.'
            : `You were invited: sign up with ${offer.sso ?? 'single sign-on'}.`}
        </p>
      )}
      {signup && !passwordForm && (
        <p class="muted">
          {offer.sso === null
            ? 'Signing up with a password is turned off on this server.'
            : `Accounts on this server sign in with ${offer.sso}; passwords are turned off.`}
        </p>
      )}
      {deleted && !signup && (
        <p class="notice" role="status">
          Your account is deleted, with every note in it, and this device has forgotten it.
        </p>
      )}
      {ended && !signup && (
        <p class="notice" role="status">
          Your session has ended. Log in again to go on: unsaved text stays on this device and is offered back.
        </p>
      )}
      {ssoError !== null && !signup && (
        <p class="error" role="alert">
          {ssoError}
        </p>
      )}
      {signup && signupOffered && offer.sso !== null && (
        <p>
          {/* The invitation travels through the provider in a signed cookie and is used when the account is made. */}
          <button
            type="button"
            onClick={() =>
              location.assign(
                invitation === undefined
                  ? '/api/auth/oidc/login'
                  : `/api/auth/oidc/login?invitation=${encodeURIComponent(invitation)}`,
              )
            }
          >
            Sign up with {offer.sso}
          </button>
        </p>
      )}
      {!signup && offer.sso !== null && (
        <p>
          {/* A navigation, not a fetch: the provider's pages take over and send the browser back signed in. */}
          <button type="button" onClick={() => location.assign('/api/auth/oidc/login')}>
            Sign in with {offer.sso}
          </button>
        </p>
      )}
      {!signup && !offer.passwords && <p class="muted">Passwords sign in administrators only on this server.</p>}
      {passwordForm && (
        <form onSubmit={submit} noValidate>
          {!setup && <label for="username">Username</label>}
          {!setup && (
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
          )}
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
            autoComplete={signup || setup ? 'new-password' : 'current-password'}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
            aria-describedby={signup || setup ? 'password-rules' : undefined}
          />
          {(signup || setup) && <PasswordRules password={password} id="password-rules" />}
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
            {setup ? 'Set password' : signup ? 'Sign up' : code === null ? 'Log in' : 'Verify and log in'}
          </button>
        </form>
      )}
      {!signup && !setup && (
        <p>
          <a href="/forgot-password">Forgot password?</a>
        </p>
      )}
      {!signup && !setup && passkeysSupported() && (
        <p>
          <button type="button" class="secondary" disabled={busy} onClick={withPasskey}>
            Sign in with a passkey
          </button>
        </p>
      )}
      {signup || setup ? (
        <p>
          Already have an account? <a href="/login">Log in</a>
        </p>
      ) : (
        signupMode === 'open' &&
        config.data !== undefined && (
          <p>
            New here? <a href="/signup">Create an account</a>
          </p>
        )
      )}
    </main>
  );
}

/**
 * Whether this browser can use a passkey at all (what `browserSupportsWebAuthn` of SimpleWebAuthn
 * checks): asked here, because importing that library for it would put all of it on the login page.
 */
function passkeysSupported(): boolean {
  return typeof globalThis.PublicKeyCredential === 'function';
}

/** What a single sign-on refusal code means, for the person who was sent back to the login page. */
export function ssoErrorMessage(code: string | null): string | null {
  switch (code) {
    case null:
      return null;
    case 'invitation_required':
      return 'Single sign-on: you need an invitation to join this server. Open the invitation link an administrator sent you and sign up from there (an invitation that was already used, revoked or expired needs a new one).';
    case 'signup_closed':
      return 'Single sign-on: sign-up is closed on this server. Ask an administrator to create or invite your account.';
    case 'invalid_credentials':
      return 'Single sign-on: this account cannot sign in. Ask an administrator.';
    case 'oidc_unavailable':
      return 'Single sign-on: the sign-in provider could not be reached. Try again later.';
    default:
      return 'Single sign-on did not complete. Try again.';
  }
}
