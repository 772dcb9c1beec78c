/**
 * Password entropy as the server computes it (src/passwords/entropy.ts, go-password-validator's
 * formula, docs/api.md "Entropy"): the web client's own copy, so the strength shown while typing
 * is the verdict the server will give without the client importing server code.
 * web/test/entropy.test.ts holds the two to the same answers.
 */
const CHARACTER_CLASSES = [
  '!@$&*',
  '_-., ',
  '"#%\'()+/:;<=>?[\\]^{|}~',
  'abcdefghijklmnopqrstuvwxyz',
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  '0123456789',
];

const utf8 = new TextEncoder();
const SEQUENCES = ['0123456789', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm', 'abcdefghijklmnopqrstuvwxyz'];
const ALL_SEQUENCES = [...SEQUENCES, ...SEQUENCES.map((s) => [...s].reverse().join(''))];

/** B: the size of every character class used, plus 1 per distinct character in no class. */
export function entropyBase(password: string): number {
  const used = new Set<string>();
  let base = 0;
  for (const char of new Set(password)) {
    const cls = CHARACTER_CLASSES.find((c) => c.includes(char));
    if (cls === undefined) base += 1;
    else used.add(cls);
  }
  for (const cls of used) base += cls.length;
  return base;
}

/** L: the UTF-8 length left after trimming repeats and keyboard/alphabet runs. */
export function entropyLength(password: string): number {
  let chars = collapseRepeats([...password]);
  for (const sequence of ALL_SEQUENCES) chars = trimSequence(chars, [...sequence]);
  return utf8.encode(chars.join('')).length; // TextEncoder, not Buffer: the web client runs this too
}

export function passwordEntropy(password: string): number {
  const base = entropyBase(password);
  return base === 0 ? 0 : entropyLength(password) * Math.log2(base);
}

/** Keeps at most two of a run of one character: "aaaa" → "aa". */
function collapseRepeats(chars: string[]): string[] {
  const kept: string[] = [];
  for (const char of chars) {
    const n = kept.length;
    if (n >= 2 && kept[n - 1] === char && kept[n - 2] === char) continue;
    kept.push(char);
  }
  return kept;
}

/**
 * Walks the password against the sequence the way the reference does: a run that follows the
 * sequence keeps its first two characters and loses the rest ("123456" → "12"). The reference's
 * cursor steps (including the character it skips after each pass over the sequence) are kept on
 * purpose, because its published results depend on them.
 */
function trimSequence(input: string[], sequence: string[]): string[] {
  const chars = [...input];
  let matches = 0;
  for (let i = 0; i < chars.length; i++) {
    for (let j = 0; j < sequence.length; j++) {
      if (i >= chars.length) break;
      if (chars[i] !== sequence[j]) {
        matches = 0;
        continue;
      }
      matches++;
      if (matches > 2) chars.splice(i, 1);
      else i++;
    }
  }
  return chars;
}
