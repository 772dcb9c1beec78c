/**
 * The three-way merge of a merging save (src/notes/merge.ts) on 1 MiB notes, on this thread:
 * `npx tsx bench/merge.ts`. Prints one line per case: its size, lines and milliseconds.
 */
import { mergeContent } from '../src/notes/merge.js';

function time(name: string, base: string, ours: string, theirs: string): void {
  const started = performance.now();
  const outcome = mergeContent(base, ours, theirs);
  const ms = performance.now() - started;
  const lines = base.split('\n').length;
  console.log(
    `${name.padEnd(44)} ${(base.length / 1048576).toFixed(2)} MiB ${String(lines).padStart(7)} lines ${ms.toFixed(1).padStart(8)} ms ` +
      (outcome.merged ? 'merged' : `${outcome.conflicts.length} conflicts`),
  );
}

const MiB = 1024 * 1024;
const prose = (make: (n: number) => string[]) => {
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < MiB; n += 1) for (const line of make(n)) lines.push(line), (size += line.length);
  return lines;
};
const edit = (lines: string[], change: (line: string, i: number) => string) => lines.map(change).join('');

let lines = prose((n) => [`Line ${n} of the note, with some words to make it about sixty chars.\n`]);
let base = lines.join('');
time(
  'unique lines, 2 edits and an append',
  base,
  edit(lines, (l, i) => (i === 100 ? 'ours\n' : l)),
  `${edit(lines, (l, i) => (i === 10000 ? 'theirs\n' : l))}end\n`,
);
time(
  'unique lines, edits every 50 lines',
  base,
  edit(lines, (l, i) => (i % 50 === 0 ? `o${l}` : l)),
  edit(lines, (l, i) => (i % 50 === 25 ? `t${l}` : l)),
);
time(
  'unique lines, conflicts every 50 lines',
  base,
  edit(lines, (l, i) => (i % 50 === 0 ? `o${l}` : l)),
  edit(lines, (l, i) => (i % 50 === 0 ? `t${l}` : l)),
);
time(
  'unique lines, ours reversed',
  base,
  [...lines].reverse().join(''),
  edit(lines, (l, i) => (i === 7 ? `t${l}` : l)),
);
lines = prose((n) => [`Paragraph ${n} with some words in it to be a line of prose.\n`, '\n']);
base = lines.join('');
time(
  'every other line blank, 2 edits',
  base,
  edit(lines, (l, i) => (i === 100 ? 'ours\n' : l)),
  edit(lines, (l, i) => (i === 10000 ? 'theirs\n' : l)),
);
const same = 'a\n'.repeat(500_000);
time('500,000 identical lines, both edit', same, `b\n${same}`, `${same}c\n`);
