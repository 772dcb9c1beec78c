import { useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { Loaded, useResource } from '../api/resource';
import { formatTime } from '../app/format';
import { createInvitation, listInvitations, revokeInvitation, type Invitation } from './api';

type Message = { ok: boolean; text: string } | null;

/** Copies a link, or says to copy it by hand where the browser does not allow it. */
export async function copyLink(url: string, say: (message: Message) => void): Promise<void> {
  try {
    await navigator.clipboard.writeText(url);
    say({ ok: true, text: 'Link copied.' });
  } catch {
    say({ ok: false, text: 'Copying is not allowed here; select the link and copy it.' });
  }
}

/** Invitations: single-use sign-up links (SIGNUP=invite or closed); the link is shown once, when made. */
export function Invitations() {
  const invitations = useResource((signal) => listInvitations(signal), []);
  const [email, setEmail] = useState('');
  const [admin, setAdmin] = useState(false);
  const [link, setLink] = useState<string | null>(null);
  const [message, setMessage] = useState<Message>(null);
  const create = async (event: Event) => {
    event.preventDefault();
    setMessage(null);
    try {
      const created = await createInvitation({ ...(email === '' ? {} : { email }), admin });
      setLink(created.url);
      setEmail('');
      setAdmin(false);
      await invitations.reload();
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  const revoke = async (row: Invitation) => {
    try {
      await revokeInvitation(row.id);
      setMessage({ ok: true, text: 'Invitation revoked: its link no longer works.' });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
    await invitations.reload();
  };
  return (
    <section aria-labelledby="invitations-heading">
      <h2 id="invitations-heading">Invitations</h2>
      <form onSubmit={create} class="inline-form">
        <label for="invite-email">E-mail (optional)</label>
        <input
          id="invite-email"
          type="email"
          autoComplete="off"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <label>
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.currentTarget.checked)} /> As an
          administrator
        </label>
        <button type="submit">Create invitation</button>
      </form>
      {link !== null && (
        <p class="flash" role="status">
          Invitation link (single use, shown only now):{' '}
          <input
            aria-label="Invitation link"
            readOnly
            value={link}
            size={60}
            onFocus={(e) => e.currentTarget.select()}
          />{' '}
          <button type="button" class="secondary" onClick={() => copyLink(link, setMessage)}>
            Copy link
          </button>
        </p>
      )}
      {message && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <Loaded resource={invitations} what="the invitations">
        {(list: Invitation[]) =>
          list.length === 0 ? (
            <p class="muted">No open invitations.</p>
          ) : (
            <ul class="rows table" aria-label="Open invitations">
              {list.map((row) => (
                <li key={row.id} aria-label={`Invitation ${row.email ?? row.id}`}>
                  <span class="row-title">
                    {row.email ?? 'Anyone with the link'}
                    {row.admin && ' (admin)'}
                  </span>
                  <span class="meta">until {formatTime(row.expires_at)}</span>
                  <span class="actions">
                    <button type="button" class="secondary" onClick={() => revoke(row)}>
                      Revoke
                    </button>
                  </span>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
