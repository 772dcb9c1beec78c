/** Values going in, and the errors the two dialects throw (rows coming out: database.ts). */

export const nowIso = (): string => new Date().toISOString();

/** For `utf8` columns (text stored as bytes so NUL survives); they read back as strings. */
export function encodeText(value: string): Buffer {
  return Buffer.from(value, 'utf8');
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = errorCode(error);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = errorCode(error);
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
