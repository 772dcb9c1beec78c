/**
 * Each person's colour in live editing (their cursor, their name's label, their selection): one of
 * PALETTE, chosen by the name, so every client colours a person alike without asking theirs.
 * Dark enough for white names on them (WCAG AA).
 */
export const PALETTE = ['#1f5fbf', '#a3327a', '#2f6f3e', '#8a4b00', '#6b3fa0', '#b3261e'];

export function colourFor(name: string): string {
  let hash = 0;
  for (let i = 0; i < name.length; i += 1) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return PALETTE[Math.abs(hash) % PALETTE.length]!;
}
