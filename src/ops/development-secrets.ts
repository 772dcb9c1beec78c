import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

type Env = Record<string, string | undefined>;

/**
 * Outside production, with neither JWT_SECRET nor CSRF_SECRET set and the database in a SQLite
 * file: secrets generated once and kept beside that file (mode 0600), so that restarting a
 * development server does not sign everyone out. Production still requires both to be set
 * (config.ts); anything else keeps per-process random secrets, as before.
 */
export function withDevelopmentSecrets(env: Env): { env: Env; file?: string } {
  if ((env.NODE_ENV ?? 'development') === 'production' || nonEmpty(env.JWT_SECRET) || nonEmpty(env.CSRF_SECRET))
    return { env };
  const url = nonEmpty(env.DATABASE_URL) ?? 'sqlite:./data/vellum.db';
  if (!url.startsWith('sqlite:')) return { env };
  const database = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (database === '' || database === ':memory:') return { env };
  const file = path.join(path.dirname(path.resolve(database)), '.vellum-secrets.json');
  const secrets = readSecrets(file) ?? createSecrets(file);
  if (secrets === undefined) return { env };
  return { env: { ...env, JWT_SECRET: secrets.jwt, CSRF_SECRET: secrets.csrf }, file };
}

interface Secrets {
  jwt: string;
  csrf: string;
}

function readSecrets(file: string): Secrets | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Secrets>;
    return typeof value.jwt === 'string' &&
      value.jwt.length >= 32 &&
      typeof value.csrf === 'string' &&
      value.csrf.length >= 32 &&
      value.jwt !== value.csrf
      ? { jwt: value.jwt, csrf: value.csrf }
      : undefined;
  } catch {
    return undefined;
  }
}

function createSecrets(file: string): Secrets | undefined {
  const secrets = { jwt: randomBytes(32).toString('base64url'), csrf: randomBytes(32).toString('base64url') };
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // 'wx': of two processes starting at once, the second reads what the first wrote.
    fs.writeFileSync(file, `${JSON.stringify(secrets)}\n`, { mode: 0o600, flag: 'wx' });
    return secrets;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readSecrets(file);
    return undefined; // a read-only directory: random secrets for this process, as before
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
