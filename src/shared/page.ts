export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

/** A page as the handlers get it from a validated query (schemas.ts: Limit, Offset, with their defaults). */
export interface Page {
  limit: number;
  offset: number;
}
