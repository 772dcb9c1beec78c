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

/**
 * A schema keyword for the OpenAPI document only: its value stands in for the schema there. Some
 * inputs are checked by hand at run time so that a 400 can name the parameter and the rule (query
 * strings, If-Match, signup fields); the document still tells clients exactly what is accepted.
 * Registered with Ajv as an annotation (app.ts), so validation ignores it.
 */
export const DOCUMENTED_AS = 'x-documented-as';

export function documentedAs<T extends object>(schema: T, documented: Record<string, unknown>): T {
  return Object.assign(schema, { [DOCUMENTED_AS]: documented });
}

/** An integer query parameter, a string on the wire, parsed by hand (pagination.ts). */
export function integerQuery(description: string, range: { minimum: number; maximum?: number; default?: number }) {
  return documentedAs(Type.String({ description }), { type: 'integer', description, ...range });
}

export const PaginationQuery = Type.Object({
  limit: Type.Optional(integerQuery('page size', { minimum: 1, maximum: 100, default: 50 })),
  offset: Type.Optional(integerQuery('rows to skip', { minimum: 0, default: 0 })),
});
export type PaginationQuery = Static<typeof PaginationQuery>;

/** The spec's boolean query strings, as Go's strconv.ParseBool reads them. */
const TRUE_STRINGS = ['1', 't', 'T', 'TRUE', 'true', 'True'];
export const BOOLEAN_STRINGS: readonly string[] = [...TRUE_STRINGS, '0', 'f', 'F', 'FALSE', 'false', 'False'];

export const parseBooleanString = (value: string | undefined): boolean => value !== undefined && TRUE_STRINGS.includes(value);

/** Account and login bodies: the largest legitimate one is two 256-character passwords, JSON-escaped. */
export const AUTH_BODY_LIMIT = 16 * 1024;
