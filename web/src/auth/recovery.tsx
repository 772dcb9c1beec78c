import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { confirmEmail, confirmPasswordReset, requestPasswordReset } from './api';
import { PasswordRules } from './password-rules';

/** /forgot-password: asks for a reset link; the answer is the same whether or not the account exists. */
export function ForgotPasswordPage() {
  const [login, setLogin] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      setMessage({ ok: true, text: await requestPasswordReset(login) });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="auth">
      <h1>Forgot your password?</h1>
      <p>
        If your account has a confirmed e-mail address, we mail you a link to choose a new password. Otherwise ask an
        administrator for a reset link.
      </p>
      <form onSubmit={submit}>
        <label for="reset-login">Username or e-mail address</label>
        <input
          id="reset-login"
          name="login"
          autoComplete="username"
          autoCapitalize="none"
          spellcheck={false}
          value={login}
          onInput={(e) => setLogin(e.currentTarget.value)}
          required
        />
        {message && (
          <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
            {message.text}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Send reset link
        </button>
      </form>
      <p>
        <a href="/login">Back to log in</a>
      </p>
    </main>
  );
}

/** /reset?token=…: the new password, once; every session of the account then ends. */
export function ResetPasswordPage({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const user = await confirmPasswordReset(token, password);
      setPassword('');
      setMessage({
        ok: true,
        text: `Password changed for ${user.username}. Every session was signed out: log in with the new password.`,
      });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="auth">
      <h1>Choose a new password</h1>
      <form onSubmit={submit}>
        <label for="reset-password">New password</label>
        <input
          id="reset-password"
          type="password"
          autoComplete="new-password"
          value={password}
          aria-describedby="reset-password-rules"
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
        />
        <PasswordRules password={password} id="reset-password-rules" />
        {message && (
          <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
            {message.text}
          </p>
        )}
        <button type="submit" disabled={busy || message?.ok === true}>
          Set new password
        </button>
      </form>
      <p>
        <a href="/login">Log in</a>
      </p>
    </main>
  );
}

/** /confirm-email?token=…: confirms the address at once, signed in or not. */
export function ConfirmEmailPage({ token }: { token: string }) {
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  useEffect(() => {
    (async () => {
      try {
        const user = await confirmEmail(token);
        setMessage({ ok: true, text: `Your e-mail address ${user.email ?? ''} is confirmed.` });
      } catch (e) {
        setMessage({ ok: false, text: errorMessage(e) });
      }
    })();
  }, [token]);
  return (
    <main id="main" class="auth">
      <h1>Confirm your e-mail address</h1>
      {message === null ? (
        <p role="status">Confirming…</p>
      ) : (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <p>
        <a href="/">Go to your notes</a>
      </p>
    </main>
  );
}
