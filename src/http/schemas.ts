import { Type, type Static } from 'typebox';
import { UUID_PATTERN } from '../shared/ids.js';

/** Shared pieces of route schemas. */

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'UUID' });

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 UTC with milliseconds' });

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'RFC 9457 problem details' },
);

/** Query strings are parsed by hand (see pagination.ts) so that errors can name the parameter. */
export const PaginationQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'page size, 1 to 100 (default 50)' })),
  offset: Type.Optional(Type.String({ description: 'rows to skip, 0 or more (default 0)' })),
});
export type PaginationQuery = Static<typeof PaginationQuery>;
