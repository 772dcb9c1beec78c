import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client';
import { navigate } from '../app/router';
import { findNoteByTitle } from './api';
import { NEW } from './editor-state';

/** Where a `[[Title]]` link goes (`/notes/find?title=…`): the note of that title, opened in its place. */
export const FIND = 'find';

/**
 * Opens the note a `[[link]]` names (the address becomes the note's own, so Back skips this step),
 * or says there is none and offers to write it: a new note with that title, made on its first save.
 */
export function NoteByTitle({ title, scopeKey }: { title: string; scopeKey: string }) {
  const [state, setState] = useState<{ kind: 'looking' } | { kind: 'missing' } | { kind: 'failed'; why: string }>({
    kind: 'looking',
  });
  useEffect(() => {
    const controller = new AbortController();
    setState({ kind: 'looking' });
    findNoteByTitle(title, controller.signal).then(
      (found) => {
        if (found !== null) navigate(`/notes/${found.id}${scopeKey}`, { replace: true });
        else setState({ kind: 'missing' });
      },
      (e: unknown) => {
        if (!controller.signal.aborted) setState({ kind: 'failed', why: errorMessage(e) });
      },
    );
    return () => controller.abort();
  }, [title]);

  if (state.kind === 'looking')
    return (
      <p class="muted" role="status">
        Looking for “{title}”…
      </p>
    );
  if (state.kind === 'failed')
    return (
      <p class="error" role="alert">
        {state.why}
      </p>
    );
  const params = new URLSearchParams(scopeKey);
  params.set('title', title);
  return (
    <div class="missing-note" role="status">
      <p>There is no note called “{title}” yet.</p>
      <a class="button" href={`/notes/${NEW}?${params}`}>
        Create “{title}”
      </a>
    </div>
  );
}
