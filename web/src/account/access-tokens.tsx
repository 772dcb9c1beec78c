import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import {
  createAccessToken,
  listAccessTokens,
  revokeAccessToken,
  type AccessToken as TokenRow,
  type TokenScope as Scope,
} from './api';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';
import { passwordErrorMessage } from './password-dialog';

const SCOPE_LABELS: Record<Scope, string> = {
  'notes:read': 'Read notes and files',
  'notes:write': 'Change notes and files',
  dav: 'WebDAV (file managers, sync apps)',
};

/** Personal access tokens: for scripts and other apps; each shown once, revocable at once. */
export function AccessTokens() {
  const tokens = useResource((signal) => listAccessTokens(signal), []);
  const load = tokens.reload;
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['notes:read']);
  const [days, setDays] = useState('90');
  const [password, setPassword] = useState('');
  const [created, setCreated] = useState<{ token: string; dav: boolean } | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setMessage(null);
    try {
      const body = {
        name: name.trim() || 'Token',
        scopes,
        password,
        ...(days === 'never' ? {} : { expires_in_days: Number(days) }),
      };
      const result = await createAccessToken(body);
      setCreated({ token: result.token, dav: result.scopes.includes('dav') });
      setOpen(false);
      setName('');
      setPassword('');
      await load();
    } catch (e) {
      setMessage({ ok: false, text: passwordErrorMessage(e, password) });
    }
  };
  const revoke = async (row: TokenRow) => {
    if (!window.confirm(`Revoke “${row.name}”? Apps using it stop working at once.`)) return;
    try {
      await revokeAccessToken(row.id);
      setMessage({ ok: true, text: `“${row.name}” revoked.` });
      await load();
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  const toggle = (scope: Scope) =>
    setScopes(scopes.includes(scope) ? scopes.filter((s) => s !== scope) : [...scopes, scope]);

  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Access tokens</h2>
      <p class="muted">
        For scripts and other apps: a token acts for you within what you allow, without your password. Keep it secret.
      </p>
      <p class="muted" id="webdav-address">
        Your notes as a folder of Markdown files (file managers, rclone, Obsidian’s Remotely Save): WebDAV at{' '}
        <code>{`${location.origin}/dav/`}</code> with your username and a token that may use WebDAV as the password.
      </p>
      {created && (
        <div class="notice" role="status">
          <p>Your new token — copy it now, it is not shown again:</p>
          <p>
            <code class="secret">{created.token}</code>
          </p>
          {created.dav && (
            <p>
              For WebDAV: server <code>{`${location.origin}/dav/`}</code>, your username, and this token as the
              password.
            </p>
          )}
          <div class="actions">
            <button type="button" class="secondary" onClick={() => void navigator.clipboard?.writeText(created.token)}>
              Copy token
            </button>
            <button type="button" class="secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <Loaded resource={tokens} what="your tokens">
        {(rows: TokenRow[]) =>
          rows.length === 0 ? (
            <p class="muted">No tokens.</p>
          ) : (
            <ul class="rows table" aria-label="Your tokens">
              {rows.map((row) => (
                <li key={row.id} aria-label={row.name}>
                  <span class="row-title">{row.name}</span>
                  <span class="meta">
                    {row.scopes.join(', ')} · created {formatTime(row.created_at)} ·{' '}
                    {row.expires_at ? `expires ${formatTime(row.expires_at)}` : 'never expires'}
                    {' · '}
                    {row.last_used_at ? `last used ${formatTime(row.last_used_at)}` : 'never used'}
                  </span>
                  <span class="actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => revoke(row)}
                      aria-label={`Revoke ${row.name}`}
                    >
                      Revoke
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      {!open ? (
        <button
          type="button"
          onClick={() => {
            setOpen(true);
            setCreated(null);
          }}
        >
          New token
        </button>
      ) : (
        <form onSubmit={submit}>
          <label for="token-name">Token name</label>
          <input
            id="token-name"
            maxLength={100}
            placeholder="e.g. Backup script"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <fieldset>
            <legend>It may</legend>
            {(Object.keys(SCOPE_LABELS) as Scope[]).map((scope) => (
              <label key={scope} class="check">
                <input type="checkbox" checked={scopes.includes(scope)} onChange={() => toggle(scope)} />{' '}
                {SCOPE_LABELS[scope]}
              </label>
            ))}
          </fieldset>
          <label for="token-expiry">Expires</label>
          <select id="token-expiry" value={days} onChange={(e) => setDays(e.currentTarget.value)}>
            <option value="7">in 7 days</option>
            <option value="30">in 30 days</option>
            <option value="90">in 90 days</option>
            <option value="365">in a year</option>
            <option value="never">never</option>
          </select>
          <label for="token-password">Current password</label>
          <input
            id="token-password"
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <div class="actions">
            <button type="submit" disabled={scopes.length === 0}>
              Create token
            </button>
            <button type="button" class="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {message && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
    </section>
  );
}
