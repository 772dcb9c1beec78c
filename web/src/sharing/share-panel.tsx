import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import {
  addMember,
  changeMemberRole,
  createShare,
  listMembers,
  listShares,
  removeMember,
  revokeShare,
  type Member,
  type ShareRow,
} from './api';
import { formatTime } from '../app/format';

const EXPIRY: Array<[string, number | null]> = [
  ['never', null],
  ['in 1 day', 1],
  ['in 7 days', 7],
  ['in 30 days', 30],
];

/**
 * The note's share links: create one (the latest version always, or this version for good, with an
 * expiry), copy it, see its views, revoke it. Anyone with a link reads the note without an account.
 */
export function SharePanel({ noteId, version, onClose }: { noteId: string; version: number; onClose: () => void }) {
  const [rows, setRows] = useState<ShareRow[] | null>(null);
  const [pin, setPin] = useState(false);
  const [expiry, setExpiry] = useState('never');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const load = async () => {
    try {
      setRows(await listShares(noteId));
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  useEffect(() => void load(), [noteId]);

  const create = async (event: Event) => {
    event.preventDefault();
    setMessage(null);
    const days = EXPIRY.find(([label]) => label === expiry)?.[1] ?? null;
    try {
      const created = await createShare(noteId, {
        version: pin ? version : null,
        expires_at: days === null ? null : new Date(Date.now() + days * 86_400_000).toISOString(),
      });
      await navigator.clipboard?.writeText(created.url).catch(() => undefined);
      // The list first, then the word that it is done: whoever reads the status finds the new link listed.
      await load();
      setMessage({ ok: true, text: 'Link created and copied. Anyone with it can read this note.' });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  const copy = async (row: ShareRow) => {
    try {
      await navigator.clipboard.writeText(row.url);
      setMessage({ ok: true, text: 'Link copied.' });
    } catch {
      setMessage({ ok: false, text: 'Copying is not allowed here; select the link and copy it.' });
    }
  };
  const revoke = async (row: ShareRow) => {
    try {
      await revokeShare(noteId, row.id);
      await load();
      setMessage({ ok: true, text: 'Link revoked: it no longer works.' });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };

  return (
    <section class="share-panel" aria-labelledby="share-heading">
      <h2 id="share-heading">Share</h2>
      <form onSubmit={create} class="inline">
        <fieldset>
          <legend>The link shows</legend>
          <label class="check">
            <input type="radio" name="pin" checked={!pin} onChange={() => setPin(false)} /> the latest version, always
          </label>
          <label class="check">
            <input type="radio" name="pin" checked={pin} onChange={() => setPin(true)} /> version {version}, for good
          </label>
        </fieldset>
        <label for="share-expiry">Expires</label>
        <select id="share-expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
          {EXPIRY.map(([label]) => (
            <option key={label} value={label}>
              {label}
            </option>
          ))}
        </select>
        <button type="submit">Create link</button>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </form>
      {message && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <People noteId={noteId} />
      {rows !== null && rows.length > 0 && (
        <ul class="rows table" aria-label="Share links">
          {rows.map((row) => (
            <li key={row.id}>
              <input
                class="share-url"
                readOnly
                value={row.url}
                aria-label="Share link"
                onFocus={(e) => e.currentTarget.select()}
              />
              <span class="meta">
                {row.version === null ? 'latest version' : `version ${row.version}`} · {row.views}{' '}
                {row.views === 1 ? 'view' : 'views'}
                {' · '}
                {row.expires_at ? `expires ${formatTime(row.expires_at)}` : 'no expiry'}
              </span>
              <span class="actions">
                <button type="button" class="secondary" onClick={() => copy(row)}>
                  Copy link
                </button>
                <button type="button" class="secondary" onClick={() => revoke(row)}>
                  Revoke
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** People the note is shared with: add by username with a role, change the role, remove. */
function People({ noteId }: { noteId: string }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<Member['role']>('editor');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const load = async () => {
    try {
      setMembers(await listMembers(noteId));
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  useEffect(() => void load(), [noteId]);
  const act = async (work: () => Promise<unknown>, done: string) => {
    setMessage(null);
    try {
      await work();
      await load();
      setMessage({ ok: true, text: done });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  const add = (event: Event) => {
    event.preventDefault();
    const name = username.trim();
    if (name === '') return;
    void act(
      async () => {
        await addMember(noteId, name, role);
        setUsername('');
      },
      `Shared with ${name}: they can ${role === 'editor' ? 'read and edit' : 'read'} it.`,
    );
  };
  const change = (member: Member, next: Member['role']) =>
    void act(
      () => changeMemberRole(noteId, member.user_id, next),
      `${member.username} can now ${next === 'editor' ? 'read and edit' : 'read'} it.`,
    );
  const remove = (member: Member) =>
    void act(() => removeMember(noteId, member.user_id), `${member.username} no longer has this note.`);
  return (
    <section aria-labelledby="people-heading">
      <h3 id="people-heading">People</h3>
      <form onSubmit={add} class="inline">
        <label for="member-username">Username</label>
        <input
          id="member-username"
          autoComplete="off"
          maxLength={64}
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
        <label for="member-role">Role</label>
        <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Member['role'])}>
          <option value="editor">can edit</option>
          <option value="viewer">can view</option>
        </select>
        <button type="submit">Add person</button>
      </form>
      {message && (
        <p class={message.ok ? 'flash' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      {members !== null && members.length > 0 && (
        <ul class="rows table" aria-label="People with this note">
          {members.map((member) => (
            <li key={member.user_id} aria-label={member.username}>
              <span class="row-title">{member.username}</span>
              <label class="sr-only" for={`role-${member.user_id}`}>
                Role of {member.username}
              </label>
              <select
                id={`role-${member.user_id}`}
                value={member.role}
                onChange={(e) => change(member, e.currentTarget.value as Member['role'])}
              >
                <option value="editor">can edit</option>
                <option value="viewer">can view</option>
              </select>
              <span class="actions">
                <button
                  type="button"
                  class="secondary"
                  onClick={() => remove(member)}
                  aria-label={`Remove ${member.username}`}
                >
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
