/** Texts for diff tests: the same for a seed on every run. */

/** The same pseudo-random sequence for a seed, every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `size` characters (or a little less) of lines made by `line(i)`. */
function text(size: number, line: (i: number) => string): string {
  const lines: string[] = [];
  for (let n = 0, i = 0; n < size; i += 1) {
    lines.push(line(i));
    n += lines.at(-1)!.length;
  }
  return lines.join('').slice(0, size);
}

/** Lines drawn from a few values: no line is unique, so no anchor cuts the search short. */
export const fewValues = (size: number, seed: number) => {
  const next = random(seed);
  return text(size, () => `${Math.floor(next() * 30)}\n`);
};

/** Distinct lines of prose-like words. */
export const prose = (size: number, seed: number) => {
  const next = random(seed);
  return text(
    size,
    (i) => `${Array.from({ length: 8 }, () => Math.floor(next() * 5000).toString(36)).join(' ')} ${i}\n`,
  );
};
