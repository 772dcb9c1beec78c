/**
 * SQL texts of the queries compiled once (compiled.ts), each with a statement name that the
 * PostgreSQL driver prepares it under. Bounded by the number of compiled queries in the code.
 */
const names = new Map<string, string>();

export function registerStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `vellum_${names.size + 1}`);
}

export function statementName(sql: string): string | undefined {
  return names.get(sql);
}
