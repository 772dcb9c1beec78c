import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';

/**
 * compose.yaml rendered as `docker compose config` would with a .env that sets every variable of
 * .env.example (docker compose is not installed where the tests run, so this reads the file and
 * applies compose's rules: env_file first, then `environment` with ${VAR}, ${VAR:-default} and
 * ${VAR:?error} taken from .env).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

function readEnvFile(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m !== null) env.set(m[1]!, m[2]!);
  }
  return env;
}

function interpolate(value: string, env: Map<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const set = env.get(name);
    if (set !== undefined && set !== '') return set;
    if (op === ':?') throw new Error(`compose refuses: ${arg}`);
    return op === ':-' ? (arg ?? '') : '';
  });
}

interface Service {
  env_file?: Array<string | { path: string; required?: boolean }>;
  environment?: Record<string, string | number | null>;
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  stop_grace_period?: string;
}

function containerEnvironment(service: Service, dotEnv: Map<string, string>): Map<string, string> {
  const env = new Map<string, string>();
  for (const file of service.env_file ?? []) {
    const name = typeof file === 'string' ? file : file.path;
    assert.equal(name, '.env');
    for (const [key, value] of dotEnv) env.set(key, value);
  }
  for (const [key, value] of Object.entries(service.environment ?? {})) {
    env.set(key, interpolate(String(value ?? ''), dotEnv));
  }
  return env;
}

const example = readEnvFile(fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8'));
/** Decided by compose.yaml itself for the replicas (the network, TLS in front, production). */
const DECIDED_BY_COMPOSE = new Set([
  'NODE_ENV',
  'HOST',
  'PORT',
  'DATABASE_URL',
  'REDIS_URL',
  'PUBLIC_URL',
  'TRUST_PROXY',
]);
/** compose's own variables, not Vellum's. */
const COMPOSE_ONLY = new Set(['POSTGRES_PASSWORD', 'VELLUM_HOST']);

/** A .env setting every variable to a value of its own. */
function everyVariable(): Map<string, string> {
  const env = new Map<string, string>();
  for (const key of example.keys()) env.set(key, `value-of-${key.toLowerCase()}`);
  return env;
}

const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const replicas = Object.keys(compose.services).filter((name) => name.startsWith('vellum'));

test('compose passes every variable of .env.example to every replica', () => {
  assert.ok(replicas.length >= 2);
  const dotEnv = everyVariable();
  for (const name of replicas) {
    const env = containerEnvironment(compose.services[name]!, dotEnv);
    const missing = [...example.keys()].filter(
      (key) => !DECIDED_BY_COMPOSE.has(key) && !COMPOSE_ONLY.has(key) && env.get(key) !== dotEnv.get(key),
    );
    assert.deepEqual(missing, [], `${name} does not receive these from .env`);
    assert.equal(env.get('NODE_ENV'), 'production');
    assert.equal(env.get('DATABASE_URL'), 'postgres://vellum:value-of-postgres_password@postgres:5432/vellum');
  }
});

test('compose refuses to start without METRICS_TOKEN (/metrics is reachable through Caddy)', () => {
  const dotEnv = everyVariable();
  dotEnv.set('METRICS_TOKEN', '');
  for (const name of replicas) {
    assert.throws(() => containerEnvironment(compose.services[name]!, dotEnv), /METRICS_TOKEN/);
  }
});

test('replicas run read-only, with no capabilities and no privilege gain, and stop after the drain', () => {
  for (const name of replicas) {
    const service = compose.services[name]!;
    assert.equal(service.read_only, true, name);
    assert.deepEqual(service.cap_drop, ['ALL'], name);
    assert.ok(service.security_opt?.includes('no-new-privileges:true'), name);
    // SHUTDOWN_DRAIN_SECONDS (5) + the close time-out (10 s).
    assert.ok(Number.parseInt(service.stop_grace_period ?? '10', 10) >= 15, name);
  }
});

test('the image is built on a supported Node LTS (22)', () => {
  const froms = fs
    .readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('FROM '));
  assert.ok(froms.length >= 2);
  for (const from of froms) assert.match(from, /^FROM node:22[-.]/);
});
