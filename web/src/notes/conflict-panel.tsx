import { useState } from 'preact/hooks';
import type { Note } from './api';
import { resolved, resolvedTitle, type Choice, type Region } from './merge-choices';

/**
 * A save whose changes overlap changes saved elsewhere (409 `merge_conflict`): nothing was saved.
 * `regions`: the three-way merge of the text typed on `base` (mine) with the version saved since
 * (`server`), agreed stretches and overlapping places in order.
 */
export interface Conflict {
  server: Note;
  base: { title: string; content: string };
  mine: { title: string; content: string };
  regions: Region[];
}

const CHOICES: { value: Choice; label: string }[] = [
  { value: 'both', label: 'Keep both' },
  { value: 'mine', label: 'Use mine' },
  { value: 'theirs', label: 'Use theirs' },
];

/** What is shown of an empty side: nothing was there. */
const shown = (text: string) => (text === '' ? '(nothing)' : text);

/**
 * The merged text first: everything that did not overlap is already in it, and at each place both
 * changed, both texts are kept (theirs, then mine) until the person chooses one of them there. No
 * button drops the other person's text unseen: each choice is made where both texts are shown.
 */
export function ConflictPanel({
  conflict,
  saveMerged,
  takeTheirs,
}: {
  conflict: Conflict;
  /** Saves this text over the version saved elsewhere (it includes that version's changes). */
  saveMerged: (text: { title: string; content: string }) => void;
  /** Drops the text typed here for the version saved elsewhere (after copying it, say). */
  takeTheirs: () => void;
}) {
  const { server, base, mine, regions } = conflict;
  const titleClash = mine.title !== server.title && mine.title !== base.title && server.title !== base.title;
  const places = regions.filter((r) => !('ok' in r)) as Exclude<Region, { ok: string }>[];
  const [choices, setChoices] = useState<Choice[]>(() => places.map(() => 'both'));
  const [titleChoice, setTitleChoice] = useState<Choice>('both');
  const [copied, setCopied] = useState('');
  const merged = {
    title: resolvedTitle(base.title, mine.title, server.title, titleChoice),
    content: resolved(regions, choices),
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(mine.content);
      setCopied('Your text is on the clipboard.');
    } catch {
      setCopied('Copying was refused: select your text below and copy it.');
    }
  };
  const count = places.length + (titleClash ? 1 : 0);
  /** The line (in the merged text) where each overlapping place starts, to say where it is. */
  const startLines: number[] = [];
  let line = 1;
  let k = 0;
  for (const region of regions) {
    if ('ok' in region) line += region.ok.split('\n').length - 1;
    else {
      startLines.push(line);
      const text = resolved([region], [choices[k] ?? 'both']);
      line += text.split('\n').length - 1;
      k += 1;
    }
  }
  const choice = (name: string, value: Choice, set: (c: Choice) => void) => (
    <div class="choices" role="radiogroup" aria-label="Keep">
      {CHOICES.map((c) => (
        <label key={c.value} class="check">
          <input type="radio" name={name} checked={value === c.value} onChange={() => set(c.value)} /> {c.label}
        </label>
      ))}
    </div>
  );

  return (
    <section class="conflict" role="alert" aria-labelledby="conflict-heading">
      <h2 id="conflict-heading">This note changed since you opened it</h2>
      <p>
        Version {server.version} was saved elsewhere. Nothing was overwritten. Your changes and theirs are merged below;{' '}
        {count === 1 ? 'at one place' : `at ${count} places`} you both changed the same lines, and both texts are kept
        there unless you choose.
      </p>
      <div class="actions">
        <button type="button" onClick={() => saveMerged(merged)}>
          Save merged text
        </button>
        <button type="button" class="secondary" onClick={copy}>
          Copy mine
        </button>
        <button type="button" class="secondary" onClick={takeTheirs}>
          Take theirs
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
      {titleClash && (
        <fieldset class="place">
          <legend>The title</legend>
          <div class="side-by-side">
            <div>
              <h3>Theirs (version {server.version})</h3>
              <pre>{server.title}</pre>
            </div>
            <div>
              <h3>Mine</h3>
              <pre>{mine.title}</pre>
            </div>
          </div>
          {choice('title', titleChoice, setTitleChoice)}
        </fieldset>
      )}
      {places.map((place, i) => (
        <fieldset class="place" key={i}>
          <legend>
            Place {i + 1 + (titleClash ? 1 : 0)} of {count}: line {startLines[i]} of the merged text
          </legend>
          <div class="side-by-side">
            <div>
              <h3>Theirs (version {server.version})</h3>
              <pre>{shown(place.theirs)}</pre>
            </div>
            <div>
              <h3>Mine</h3>
              <pre>{shown(place.ours)}</pre>
            </div>
          </div>
          {choice(`place-${i}`, choices[i] ?? 'both', (c) => setChoices(choices.map((old, j) => (j === i ? c : old))))}
        </fieldset>
      ))}
      <details open>
        <summary>The merged text, as it will be saved</summary>
        <textarea readOnly aria-label="Merged text" value={merged.content} rows={Math.min(16, line + 1)} />
      </details>
      <details>
        <summary>Your text</summary>
        <textarea readOnly aria-label="Your text" value={mine.content} />
      </details>
    </section>
  );
}
