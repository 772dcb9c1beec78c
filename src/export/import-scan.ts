import { Errors } from '../errors.js';

/**
 * What one import document may hold. A real 64 MiB export stays well inside: a version takes at
 * least ~110 bytes of JSON even when empty, so 64 MiB holds under 620,000 versions, and a note at
 * least ~250 (notes with content take far more). The limits exist for documents made to cost
 * memory, not for real ones: JSON.parse of 64 MiB of `{},` builds 22 million objects (2.7 GB).
 */
export const IMPORT_MAX_NOTES = 100_000;
export const IMPORT_MAX_VERSIONS = 1_000_000;
/** A document is 5 levels deep (document, notes, note, versions, version); a few more are tolerated. */
export const IMPORT_MAX_DEPTH = 10;
/** Values in members the format does not define (ignored on import), or inside a field that should be a scalar. */
export const IMPORT_MAX_OTHER_VALUES = 10_000;

const invalid = Errors.invalidImport;

/** What a value is in the vellum-export format; it decides what the values inside it count as. */
type Role = 'document' | 'notes' | 'note' | 'versions' | 'version' | 'field' | 'other';

const FIELDS: Partial<Record<Role, ReadonlySet<string>>> = {
  document: new Set(['format', 'format_version', 'exported_at', 'username', 'folders']),
  note: new Set(['id', 'title', 'created_at', 'updated_at', 'folder', 'pinned', 'archived']),
  version: new Set(['version', 'title', 'content', 'created_at', 'label', 'restored_from']),
};
const ARRAYS: Partial<Record<Role, [string, Role]>> = { document: ['notes', 'notes'], note: ['versions', 'versions'] };

interface Frame {
  role: Role;
  object: boolean;
  /** Objects: the next string is a member name. */
  expectKey: boolean;
  key: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the quote that closes the string opened at `start`, or -1. */
function stringEnd(bytes: Buffer, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** A member name; long or oddly escaped ones are no name the format defines, so need no decoding. */
function memberName(bytes: Buffer, start: number, end: number): string {
  if (end - start > 64) return '';
  const raw = bytes.toString('latin1', start + 1, end);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(bytes.toString('utf8', start, end + 1)) as string;
  } catch {
    return '';
  }
}

function isStructural(byte: number): boolean {
  return (
    byte === 0x7b ||
    byte === 0x7d ||
    byte === 0x5b ||
    byte === 0x5d ||
    byte === 0x2c ||
    byte === 0x3a ||
    byte === QUOTE ||
    byte === 0x20 ||
    byte === 0x0a ||
    byte === 0x0d ||
    byte === 0x09
  );
}

/**
 * Counts what a JSON document would build before JSON.parse builds it, in one pass over its bytes
 * without allocating per value, and refuses one past the limits above with a 400 that names the
 * limit. It tokenises only as far as counting needs; malformed JSON is left for JSON.parse to refuse.
 */
export function checkImportShape(bytes: Buffer): void {
  const stack: Frame[] = [];
  let notes = 0;
  let versions = 0;
  let other = 0;

  const roleOfValue = (container: boolean, array: boolean): Role => {
    const parent = stack.at(-1);
    if (parent === undefined) return container && !array ? 'document' : 'other';
    switch (parent.role) {
      case 'notes':
        return 'note';
      case 'versions':
        return 'version';
      case 'document':
      case 'note':
      case 'version': {
        const list = ARRAYS[parent.role];
        if (list !== undefined && parent.key === list[0]) return array ? list[1] : 'field';
        return FIELDS[parent.role]!.has(parent.key) ? 'field' : 'other';
      }
      default:
        return 'other';
    }
  };
  const count = (role: Role) => {
    if (role === 'note' && ++notes > IMPORT_MAX_NOTES)
      throw invalid(`notes must hold at most ${IMPORT_MAX_NOTES} notes`);
    if (role === 'version' && ++versions > IMPORT_MAX_VERSIONS) {
      throw invalid(`the document must hold at most ${IMPORT_MAX_VERSIONS} versions in all`);
    }
    if (role === 'other' && ++other > IMPORT_MAX_OTHER_VALUES) {
      throw invalid(
        `the document must hold at most ${IMPORT_MAX_OTHER_VALUES} values in members the format does not define`,
      );
    }
  };

  const length = bytes.length;
  let i = 0;
  while (i < length) {
    const byte = bytes[i]!;
    const top = stack.at(-1);
    switch (byte) {
      case 0x20:
      case 0x0a:
      case 0x0d:
      case 0x09:
      case 0x3a:
        i += 1;
        break;
      case 0x2c: // ,
        if (top?.object) top.expectKey = true;
        i += 1;
        break;
      case 0x7b:
      case 0x5b: {
        // { [
        const array = byte === 0x5b;
        const role = roleOfValue(true, array);
        count(role);
        if (stack.length >= IMPORT_MAX_DEPTH)
          throw invalid(`the document must not be nested more than ${IMPORT_MAX_DEPTH} levels deep`);
        stack.push({ role, object: !array, expectKey: !array, key: '' });
        i += 1;
        break;
      }
      case 0x7d:
      case 0x5d: // } ]
        stack.pop();
        i += 1;
        break;
      case QUOTE: {
        const end = stringEnd(bytes, i);
        if (end === -1) return; // unterminated: JSON.parse refuses it
        if (top?.object && top.expectKey) {
          top.key = memberName(bytes, i, end);
          top.expectKey = false;
        } else {
          count(roleOfValue(false, false));
        }
        i = end + 1;
        break;
      }
      default: // a number or a literal
        count(roleOfValue(false, false));
        while (i < length && !isStructural(bytes[i]!)) i += 1;
    }
  }
}
