import { Type } from 'typebox';
import { explain } from '../shared/validation/schema-rules.js';
import { TAG_MAX_LENGTH } from './extract.js';

/**
 * `tag` as GET /notes and search take it. The tag rule as a pattern every engine reads alike: the property escapes stand alone in an
 * alternation (engines that translate `\p{…}` for Python's `re` misread them inside `[…]` and
 * dropped the rule), and the length is said again in code points, which needs no regex at all.
 */
const TAG_FILTER_PATTERN = `^#?(?:\\p{L}|\\p{M}|\\p{N}|[_/-]){1,${TAG_MAX_LENGTH}}$`;
export const TagFilter = explain(
  Type.String({
    minLength: 1,
    maxLength: TAG_MAX_LENGTH + 1,
    pattern: TAG_FILTER_PATTERN,
    description:
      'only notes with this tag or a tag below it (`a` finds `#a/b`): 1 to 64 letters, digits, _, - or /, ' +
      'optionally after a #; case is ignored',
  }),
  'must be a tag: 1 to 64 letters, digits, _, - or /, optionally after a #',
);
