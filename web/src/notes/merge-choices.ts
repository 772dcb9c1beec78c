/**
 * The choices of the conflict panel, on the regions merge-regions.ts cuts (that module, with
 * node-diff3, loads only when a save overlapped; this one is small and loads with the editor).
 */
export type Region = { ok: string } | { ours: string; theirs: string; base: string };

/** How one overlapping place is settled. Both (the default): theirs, then mine, nothing dropped. */
export type Choice = 'both' | 'mine' | 'theirs';

/** Both texts of an overlapping place, theirs first (saved first), each on lines of its own. */
export function keepBoth(theirs: string, mine: string, separator = '\n'): string {
  if (theirs === '' || mine === '') return theirs + mine;
  return theirs.endsWith('\n') ? theirs + mine : theirs + separator + mine;
}

export function resolved(regions: Region[], choices: Choice[]): string {
  let k = 0;
  let text = '';
  for (const region of regions) {
    if ('ok' in region) {
      text += region.ok;
      continue;
    }
    const choice = choices[k++] ?? 'both';
    text +=
      choice === 'mine' ? region.ours : choice === 'theirs' ? region.theirs : keepBoth(region.theirs, region.ours);
  }
  return text;
}

/** The title: one line; a change on one side is taken, two different changes are a place to choose. */
export function resolvedTitle(base: string, ours: string, theirs: string, choice: Choice): string {
  if (ours === theirs || theirs === base) return ours;
  if (ours === base) return theirs;
  return choice === 'mine' ? ours : choice === 'theirs' ? theirs : `${theirs} / ${ours}`;
}
