/** The few places where SQLite and PostgreSQL differ in what they hand back or throw. */

export function toIso(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

export const nowIso = (): string => new Date().toISOString();

export function toBool(value: boolean | number): boolean {
  return value === true || value === 1;
}

export function encodeText(value: string): Buffer {
  return Buffer.from(value, 'utf8');
}

export function decodeText(value: Buffer | Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
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
