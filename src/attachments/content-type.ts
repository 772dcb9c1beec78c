/**
 * The types served inline (the contract's list), recognised by their first bytes rather than by
 * what the uploader claimed: a file named .png that is HTML stays a download.
 */
const SIGNATURES: Array<[string, (b: Buffer) => boolean]> = [
  ['image/png', (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => ['GIF87a', 'GIF89a'].includes(b.subarray(0, 6).toString('latin1'))],
  [
    'image/webp',
    (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
  [
    'image/avif',
    (b) =>
      b.subarray(4, 8).toString('latin1') === 'ftyp' && ['avif', 'avis'].includes(b.subarray(8, 12).toString('latin1')),
  ],
  ['application/pdf', (b) => b.subarray(0, 5).toString('latin1') === '%PDF-'],
];

export const INLINE_TYPES: ReadonlySet<string> = new Set(SIGNATURES.map(([type]) => type));

/** How many leading bytes sniffing needs. */
export const SNIFF_BYTES = 16;

/**
 * The type to record: a recognised inline type from the bytes; otherwise what the client said, if
 * it is a plausible media type (never served as such), else application/octet-stream.
 */
export function detectContentType(head: Buffer, declared: string | undefined): string {
  for (const [type, matches] of SIGNATURES) if (matches(head)) return type;
  const claimed = declared?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (/^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(claimed) && !INLINE_TYPES.has(claimed))
    return claimed;
  return 'application/octet-stream';
}
