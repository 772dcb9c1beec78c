/**
 * How deep a JSON document nests, found in one pass over its bytes before anything parses it.
 *
 * JSON.parse (and Fastify's secure-json-parse, which calls it) spends about 0.15 µs a level and
 * more on the garbage: 6.5 MiB of `[[[…]]]` held the event loop 1-7 s (docs/api.md, "Limits"), all
 * of it inside JSON.parse itself (measured: Ajv, the error path and secure-json-parse's own scan
 * cost nothing). This scan is one compare or two per byte: 4-11 ms for 7 MiB of any shape, as
 * much as JSON.parse of a 7 MiB note and far less than it for anything made of small values, and
 * about 15 µs for a 10 KB note, so it runs on every body. (Skipping strings with indexOf was
 * faster on text without escapes, 14 times slower on 7 MiB of `\"`.)
 *
 * Brackets inside strings do not count. The bytes are UTF-8, whose multi-byte sequences never hold
 * an ASCII byte, so no decoding is needed. Malformed input needs no care: up to the point where it
 * stops being JSON the count is exact, and JSON.parse stops there.
 */

/** What any JSON body of this service may nest: its own documents are a handful of levels deep. */
export const JSON_MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * The deepest nesting of arrays and objects in `bytes` (0 for a scalar), counting no further than
 * one past `limit`: a result over `limit` means "too deep", found without reading the rest.
 */
export function jsonDepth(bytes: Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  const length = bytes.length;
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < length; i++) {
    const byte = bytes[i]!;
    if (byte === QUOTE) {
      // To the closing quote; a backslash escapes the byte after it (`\\"` ends, `\"` does not).
      for (i += 1; i < length; i++) {
        const inner = bytes[i]!;
        if (inner === BACKSLASH) i += 1;
        else if (inner === QUOTE) break;
      }
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) break;
      }
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      // Below zero the text stopped being JSON here, and JSON.parse stops here too.
      if (--depth < 0) break;
    }
  }
  return deepest;
}

/** Whether a JSON body nests no deeper than `limit` (JSON_MAX_DEPTH). */
export const withinJsonDepth = (bytes: Uint8Array, limit = JSON_MAX_DEPTH): boolean => jsonDepth(bytes, limit) <= limit;
