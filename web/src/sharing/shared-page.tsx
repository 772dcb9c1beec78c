import { useEffect, useMemo, useState } from 'preact/hooks';
import { Markdown } from '../markdown/markdown';
import { formatTime } from '../app/format';
import { readSharedNote, sharedAttachmentUrl, type SharedNote } from './api';

/**
 * A note someone shared by link, read-only, for anyone: no sign-in, no access token anywhere. Its
 * images come from the link's own file route, as object URLs.
 */
export function SharedPage({ token }: { token: string }) {
  const [note, setNote] = useState<SharedNote | null>(null);
  const [failure, setFailure] = useState('');

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
        const body = await readSharedNote(token);
        if (body === null) {
          setFailure('This link does not work: it may have been revoked or have expired, or the note was deleted.');
          return;
        }
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
      url = sharedAttachmentUrl(token, id);
      files.set(id, url);
    }
    return url;
  };

  return (
    <main id="main" class="page shared">
      {failure ? (
        <p class="error" role="alert">
          {failure}
        </p>
      ) : note === null ? (
        <p class="muted" role="status">
          Loading…
        </p>
      ) : (
        <article aria-labelledby="shared-title">
          <h1 id="shared-title">{note.title}</h1>
          <p class="meta">
            {note.pinned ? `Version ${note.version}, ` : ''}saved {formatTime(note.updated_at)}
            {note.tags.length > 0 && (
              <>
                {' '}
                ·{' '}
                {note.tags.map((tag) => (
                  <span key={tag} class="tag">
                    #{tag}
                  </span>
                ))}
              </>
            )}
          </p>
          {note.outdated && (
            <p class="notice" role="note">
              This link shows version {note.version}, an earlier version of this note: it has changed since.
            </p>
          )}
          <Markdown
            source={note.content}
            label="Shared note"
            loadAttachment={loadAttachment}
            remoteKey={`shared:${token}`}
            noteLinks={false}
          />
        </article>
      )}
      <p class="muted">Shared with Vellum.</p>
    </main>
  );
}
