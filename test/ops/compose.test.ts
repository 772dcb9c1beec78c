import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';

/**
 * compose.yaml as compose itself renders it (`docker compose config`, or Debian's `docker-compose
 * config`) with a .env that sets every variable of .env.example to a value of its own. No daemon is
 * needed. .ci/run installs docker-compose; outside CI a machine without compose skips with a message,
 * in CI it fails.
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

async function findCompose(): Promise<string[] | undefined> {
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    try {
      await run(command[0]!, [...command.slice(1), 'version']);
      return command;
    } catch {}
  }
  return undefined;
}

const compose = await findCompose();
let skip: string | false = false;
if (compose === undefined) {
  if (process.env.CI !== undefined)
    assert.fail('docker compose is not installed, and CI must run this test (apt-get install docker-compose)');
  skip = 'docker compose is not installed: apt-get install docker-compose to run this test';
  console.warn(`!!! SKIPPED: ${skip}`);
}

function readEnvFile(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m !== null) env.set(m[1]!, m[2]!);
  }
  return env;
}

const example = readEnvFile(await fs.readFile(path.join(ROOT, '.env.example'), 'utf8'));
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

interface Service {
  environment?: Record<string, string | null>;
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  stop_grace_period?: string;
}

let dir = '';
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vellum-compose-'));
  await fs.copyFile(path.join(ROOT, 'compose.yaml'), path.join(dir, 'compose.yaml'));
});
after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** `compose config` in a copy of the project whose .env holds `env`. */
async function render(env: Map<string, string>): Promise<{ services: Record<string, Service> }> {
  const text = [...env].map(([key, value]) => `${key}=${value}`).join('\n');
  await fs.writeFile(path.join(dir, '.env'), `${text}\n`);
  const [command, ...args] = compose!;
  // The shell's own values would win over .env: compose is given only what it needs to run.
  const { stdout } = await run(command!, [...args, 'config'], { cwd: dir, env: { PATH: process.env.PATH ?? '' } });
  return parse(stdout) as { services: Record<string, Service> };
}

/** A .env setting every variable to a value of its own. */
function everyVariable(): Map<string, string> {
  const env = new Map<string, string>();
  for (const key of example.keys()) env.set(key, `value-of-${key.toLowerCase()}`);
  return env;
}

test('compose passes every variable of .env.example to every replica', { skip }, async () => {
  const dotEnv = everyVariable();
  const { services } = await render(dotEnv);
  const replicas = Object.keys(services).filter((name) => name.startsWith('vellum'));
  assert.ok(replicas.length >= 2);
  for (const name of replicas) {
    const env = services[name]!.environment ?? {};
    const missing = [...example.keys()].filter(
      (key) => !DECIDED_BY_COMPOSE.has(key) && !COMPOSE_ONLY.has(key) && env[key] !== dotEnv.get(key),
    );
    assert.deepEqual(missing, [], `${name} does not receive these from .env`);
    assert.equal(env.NODE_ENV, 'production');
    assert.equal(env.DATABASE_URL, 'postgres://vellum:value-of-postgres_password@postgres:5432/vellum');
    assert.equal(env.PUBLIC_URL, 'https://value-of-vellum_host');
    assert.equal(env.TRUST_PROXY, 'on');
  }
});

test('compose refuses to start without METRICS_TOKEN (/metrics is reachable through Caddy)', { skip }, async () => {
  for (const [key, value] of [
    ['METRICS_TOKEN', ''],
    ['JWT_SECRET', ''],
  ] as const) {
    const dotEnv = everyVariable();
    dotEnv.set(key, value);
    await assert.rejects(render(dotEnv), (error: { stderr?: string }) => {
      assert.match(error.stderr ?? '', new RegExp(`set ${key} in .env`));
      return true;
    });
  }
});

test('replicas run read-only, with no capabilities and no privilege gain, and stop after the drain', {
  skip,
}, async () => {
  const { services } = await render(everyVariable());
  for (const name of Object.keys(services).filter((n) => n.startsWith('vellum'))) {
    const service = services[name]!;
    assert.equal(service.read_only, true, name);
    assert.deepEqual(service.cap_drop, ['ALL'], name);
    assert.ok(service.security_opt?.includes('no-new-privileges:true'), name);
    // SHUTDOWN_DRAIN_SECONDS (5) + the close time-out (10 s); compose renders 30s as "30s" (v1) or "30s"/1m0s (v2).
    assert.match(String(service.stop_grace_period), /^(30s|[3-9]\ds|\dm\d+s)$/, name);
  }
});

test('the image is built on a supported Node LTS (22)', async () => {
  const froms = (await fs.readFile(path.join(ROOT, 'Dockerfile'), 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith('FROM '));
  assert.ok(froms.length >= 2);
  for (const from of froms) assert.match(from, /^FROM node:22[-.]/);
});
