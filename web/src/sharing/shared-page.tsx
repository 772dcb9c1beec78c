import { useEffect, useMemo, useState } from 'preact/hooks';
import { Markdown } from '../markdown/markdown';
import { formatTime } from '../app/format';

type SharedNote = { title: string; content: string; version: number; updated_at: string; tags: string[]; pinned: boolean; outdated: boolean };

/**
 * A note someone shared by link, read-only, for anyone: no sign-in, no access token anywhere. Its
 * images come from the link's own file route, as object URLs.
 */
export function SharedPage({ token }: { token: string }) {
  const [note, setNote] = useState<SharedNote | null>(null);
  const [failure, setFailure] = useState('');
  const base = `/api/shared/${encodeURIComponent(token)}`;

  useEffect(() => {
    // Whatever the server says, this page asks not to be indexed.
    const robots = document.createElement('meta');
    robots.name = 'robots';
    robots.content = 'noindex';
    document.head.append(robots);
    const referrer = document.createElement('meta');
    referrer.name = 'referrer';
    referrer.content = 'no-referrer';
    document.head.append(referrer);
    (async () => {
      try {
        const response = await fetch(base, { credentials: 'omit' });
        if (response.status === 404) {
          setFailure('This link does not work: it may have been revoked or have expired, or the note was deleted.');
          return;
        }
        if (!response.ok) throw new Error(String(response.status));
        const body = (await response.json()) as SharedNote;
        setNote(body);
        document.title = `${body.title} · Vellum`;
      } catch {
        setFailure('The note cannot be loaded right now. Check your connection and try again.');
      }
    })();
    return () => {
      robots.remove();
      referrer.remove();
    };
  }, [token]);

  const files = useMemo(() => new Map<string, Promise<string>>(), [token]);
  const loadAttachment = (id: string) => {
    let url = files.get(id);
    if (url === undefined) {
      url = fetch(`${base}/attachments/${id}`, { credentials: 'omit' }).then(async (response) => {
        if (!response.ok) throw new Error(String(response.status));
        return URL.createObjectURL(await response.blob());
      });
      files.set(id, url);
    }
    return url;
  };

  return (
    <main id="main" class="page shared">
      {failure ? <p class="error" role="alert">{failure}</p> : note === null ? <p class="muted" role="status">Loading…</p> : (
        <article aria-labelledby="shared-title">
          <h1 id="shared-title">{note.title}</h1>
          <p class="meta">
            {note.pinned ? `Version ${note.version}, ` : ''}saved {formatTime(note.updated_at)}
            {note.tags.length > 0 && <> · {note.tags.map((tag) => <span key={tag} class="tag">#{tag}</span>)}</>}
          </p>
          {note.outdated && (
            <p class="notice" role="note">This link shows version {note.version}, an earlier version of this note: it has changed since.</p>
          )}
          <Markdown source={note.content} label="Shared note" loadAttachment={loadAttachment} remoteKey={`shared:${token}`} />
        </article>
      )}
      <p class="muted">Shared with Vellum.</p>
    </main>
  );
}
