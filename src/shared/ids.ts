import { randomUUID } from 'node:crypto';

/** Any RFC 4122 layout; ids we mint are v4. Plain pattern, not ajv's "uuid" format, which allows "urn:uuid:". */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID_RE = new RegExp(UUID_PATTERN);

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** PostgreSQL compares uuids case-insensitively and SQLite text does not; normalize before use. */
export function normalizeId(value: string): string {
  return value.toLowerCase();
}

export const newId = (): string => randomUUID();
