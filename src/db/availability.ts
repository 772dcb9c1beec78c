/**
 * Errors that mean "the database cannot be reached right now" rather than "this request is wrong":
 * they become 503 with Retry-After, and the pool reconnects by itself when the database returns.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03', // admin shutdown, crash shutdown, cannot connect now
  '57P04', // database dropped
  '53300', // too many connections (also a database's or role's CONNECTION LIMIT)
  // object_not_in_prerequisite_state: what connecting to a database with ALLOW_CONNECTIONS false
  // answers. The app uses nothing else that raises it (no currval, no replication slots).
  '55000',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // node-postgres reports these without a code.
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/.test(
    message,
  );
}

/**
 * The database's storage is full: SQLite's SQLITE_FULL ("database or disk is full"), PostgreSQL's
 * disk_full (53100) or out_of_memory-class space errors. Answered 507, and /readyz turns 503 until
 * a write succeeds again (StorageHealth).
 */
export function isStorageFull(error: unknown): boolean {
  const e = error as { code?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  return e.code === 'SQLITE_FULL' || e.code === '53100' || e.code === 'ENOSPC';
}

/** Whether the last write of this process failed for want of space (and none has succeeded since). */
export class StorageHealth {
  private fullSince: number | undefined;
  /** Requests that failed on the database, by cause (/metrics: vellum_database_errors_total). */
  readonly errors = { unavailable: 0, storage_full: 0 };
  get full(): boolean {
    return this.fullSince !== undefined;
  }
  markFull(): void {
    this.errors.storage_full += 1;
    this.fullSince ??= Date.now();
  }
  markWritten(): void {
    this.fullSince = undefined;
  }
}
