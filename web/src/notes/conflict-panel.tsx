import { useState } from 'preact/hooks';
import { DiffView } from '../history/diff-view';
import type { NoteDiff } from '../history/api';
import type { Note } from './api';

/** A save refused with 412: the version saved elsewhere, what changed there, and the text saved here. */
export interface Conflict {
  server: Note;
  diff: NoteDiff | null;
  mine: { title: string; content: string };
}

/** What changed elsewhere beside the user's text, and the choice: keep mine, take theirs, or copy mine. */
export function ConflictPanel({
  conflict,
  keepMine,
  takeTheirs,
}: {
  conflict: Conflict;
  keepMine: () => void;
  takeTheirs: () => void;
}) {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(conflict.mine.content);
      setCopied('Your text is on the clipboard.');
    } catch {
      setCopied('Copying was refused: select your text below and copy it.');
    }
  };
  return (
    <section class="conflict" role="alert" aria-labelledby="conflict-heading">
      <h2 id="conflict-heading">This note changed since you opened it</h2>
      <p>Version {conflict.server.version} was saved elsewhere. Nothing was overwritten. Choose what to keep:</p>
      {conflict.diff ? (
        <DiffView diff={conflict.diff} caption="Changes saved elsewhere" />
      ) : (
        <div class="side-by-side">
          <div>
            <h3>Saved elsewhere</h3>
            <pre>{conflict.server.content}</pre>
          </div>
          <div>
            <h3>Yours</h3>
            <pre>{conflict.mine.content}</pre>
          </div>
        </div>
      )}
      <div class="actions">
        <button type="button" onClick={keepMine}>
          Keep mine
        </button>
        <button type="button" class="secondary" onClick={takeTheirs}>
          Take theirs
        </button>
        <button type="button" class="secondary" onClick={copy}>
          Copy mine
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
      <details>
        <summary>Your text</summary>
        <textarea readOnly aria-label="Your text" value={conflict.mine.content} />
      </details>
    </section>
  );
}
