import { diffWordsWithSpace } from 'diff/lib/diff/word.js';
import type { NoteDiff } from './api';

type Line = { op: '=' | '-' | '+'; text: string };

/** Words that changed between a removed line and the added line that replaced it. */
function WordLine({ line, other }: { line: Line; other: Line | undefined }) {
  if (other === undefined || line.text.length + other.text.length > 4000) return <>{line.text || ' '}</>;
  const parts = line.op === '-' ? diffWordsWithSpace(line.text, other.text) : diffWordsWithSpace(other.text, line.text);
  return (
    <>
      {parts.map((part, i) => {
        if (line.op === '-' && part.added) return null;
        if (line.op === '+' && part.removed) return null;
        return part.added || part.removed ? <mark key={i}>{part.value}</mark> : <span key={i}>{part.value}</span>;
      })}
    </>
  );
}

/** A changed block pairs its removed lines with its added lines, in order, for word highlights. */
function pairs(lines: Line[]): Map<number, number> {
  const partner = new Map<number, number>();
  let i = 0;
  while (i < lines.length) {
    if (lines[i]!.op !== '-') {
      i += 1;
      continue;
    }
    const removedStart = i;
    while (i < lines.length && lines[i]!.op === '-') i += 1;
    const addedStart = i;
    while (i < lines.length && lines[i]!.op === '+') i += 1;
    for (let k = 0; removedStart + k < addedStart && addedStart + k < i; k += 1) {
      partner.set(removedStart + k, addedStart + k);
      partner.set(addedStart + k, removedStart + k);
    }
  }
  return partner;
}

export function DiffView({ diff, caption }: { diff: NoteDiff; caption: string }) {
  return (
    <section class="diff" aria-label={caption}>
      <p>
        {caption}: <span class="added">+{diff.stats.added}</span> <span class="removed">−{diff.stats.removed}</span>{' '}
        lines
        {diff.title.changed && (
          <>
            {' '}
            · title “{diff.title.from ?? ''}” → “{diff.title.to}”
          </>
        )}
        {!diff.complete && ' · simplified (large change)'}
      </p>
      {diff.hunks.length === 0 && <p class="muted">The text is the same.</p>}
      {diff.hunks.map((hunk, h) => {
        const partner = pairs(hunk.lines);
        return (
          <table key={h} class="hunk">
            <caption class="sr-only">
              Lines {hunk.to_start} to {hunk.to_start + hunk.to_lines}
            </caption>
            <tbody>
              {hunk.lines.map((line, i) => {
                const other = partner.has(i) ? hunk.lines[partner.get(i)!] : undefined;
                // The same words removed and added: only the line's ending changed (a line was added
                // after a last line that had none). Shown once, unchanged, as a reader sees it.
                const same = line.op === '=' || other?.text === line.text;
                if (same && line.op === '+') return null;
                return (
                  <tr key={i} class={same ? 'same' : line.op === '+' ? 'add' : 'del'}>
                    <th scope="row" aria-label={same ? 'unchanged' : line.op === '+' ? 'added' : 'removed'}>
                      {same ? ' ' : line.op}
                    </th>
                    <td>{same ? line.text || ' ' : <WordLine line={line} other={other} />}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        );
      })}
    </section>
  );
}
