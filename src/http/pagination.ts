import { Errors } from '../errors.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

export interface Page {
  limit: number;
  offset: number;
}

/** limit: integer 1..100 (default 50); offset: integer ≥ 0 (default 0). */
export function parsePage(query: { limit?: string | undefined; offset?: string | undefined }): Page {
  return {
    limit: parseInteger('limit', query.limit, DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: parseInteger('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

function parseInteger(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
    throw Errors.invalidQuery(`Query parameter "${name}" must be an integer ${range}`);
  }
  return value;
}
