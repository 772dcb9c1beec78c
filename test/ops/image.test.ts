import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { GOOD_PASSWORD, uniqueName } from '../helpers/harness.js';
import { exitWithin, startProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The container image, without a Docker daemon: the Dockerfile's steps are read from the file and
 * replayed in a temporary directory on exactly the files its COPY lines name (minus .dockerignore),
 * then the runtime stage's tree is started with its CMD and ENV. Two steps are stood in for:
 * `npm ci` reuses this checkout's node_modules (the same lockfile; a fresh install takes minutes),
 * and `npm prune --omit=dev` keeps exactly the packages the lockfile does not mark dev-only, linked
 * into a node_modules of their own and loaded with --preserve-symlinks so that nothing else resolves.
 * A step this test does not know fails it: a new Dockerfile step must be taught here. Under
 * scripts/test.mjs, the build is handed on to the browser tests (VELLUM_TEST_DIST).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Stage {
  name: string | undefined;
  steps: Array<{ op: string; args: string }>;
}

function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const joined = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const line of joined) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (op === undefined || args === undefined) throw new Error(`cannot read Dockerfile line: ${line}`);
    if (op.toUpperCase() === 'FROM') {
      stages.push({ name: /\sAS\s+(\S+)/i.exec(args)?.[1], steps: [] });
    } else {
      stages.at(-1)!.steps.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

function ignoredBy(patterns: string[]): (relative: string) => boolean {
  return (relative) =>
    patterns.some((p) =>
      p.startsWith('*.')
        ? !relative.includes('/') && relative.endsWith(p.slice(1))
        : relative === p || relative.startsWith(`${p}/`),
    );
}

function copyContext(from: string, to: string, ignored: (relative: string) => boolean): void {
  const relative = path.relative(ROOT, from);
  if (ignored(relative)) return;
  const stat = fs.statSync(from);
  if (stat.isDirectory()) {
    fs.mkdirSync(to, { recursive: true });
    for (const entry of fs.readdirSync(from)) copyContext(path.join(from, entry), path.join(to, entry), ignored);
  } else {
    fs.copyFileSync(from, to);
  }
}

/** COPY sources... dest, relative to WORKDIR; returns [sources, dest]. */
function copyArgs(args: string): [string[], string, string | undefined] {
  const parts = args.split(/\s+/);
  const fromStage = parts[0]?.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : undefined;
  const dest = parts.pop()!;
  return [parts, dest, fromStage];
}

/**
 * What `npm prune --omit=dev [--omit=optional]` leaves: every top-level package the lockfile does not
 * mark dev (or, with `omitOptional`, optional).
 */
function prunedNodeModules(lockfile: string, realModules: string, target: string, omitOptional: boolean): string[] {
  const lock = JSON.parse(fs.readFileSync(lockfile, 'utf8')) as {
    packages: Record<string, { dev?: boolean; optional?: boolean }>;
  };
  const kept: string[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
    if (match === null || entry.dev === true || (omitOptional && entry.optional === true)) continue;
    const name = match[1]!;
    const real = path.join(realModules, name);
    if (!fs.existsSync(real)) continue; // an optional package for another platform
    fs.mkdirSync(path.dirname(path.join(target, name)), { recursive: true });
    fs.symlinkSync(real, path.join(target, name), 'dir');
    kept.push(name);
  }
  return kept;
}

describe('the container image (Dockerfile replayed without a daemon)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-image-'));
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('builds server and client, ships only production dependencies, and serves /, /readyz and a signup', {
    timeout: 180_000,
  }, async () => {
    const stages = parseDockerfile(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
    assert.equal(stages.length, 2, 'a build stage and a runtime stage');
    const [build, runtime] = stages as [Stage, Stage];
    const ignored = ignoredBy(
      fs
        .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#')),
    );
    const buildDir = path.join(dir, 'build');
    const runDir = path.join(dir, 'run');
    const realModules = fs.realpathSync(path.join(ROOT, 'node_modules'));
    let pruned = false;
    const buildArgs: Record<string, string> = {};

    for (const { op, args } of build.steps) {
      if (op === 'ARG') {
        const [, name, value] = /^(\w+)=(\S*)$/.exec(args) ?? [];
        assert.ok(name !== undefined, `ARG with a default: ${args}`);
        buildArgs[name] = value!;
      } else if (op === 'WORKDIR') {
        assert.equal(args, '/app');
        fs.mkdirSync(buildDir, { recursive: true });
      } else if (op === 'COPY') {
        const [sources, dest] = copyArgs(args);
        for (const source of sources) {
          const target = dest.endsWith('/')
            ? path.join(buildDir, dest, path.basename(source))
            : path.join(buildDir, dest);
          copyContext(path.join(ROOT, source), target, ignored);
        }
      } else if (op === 'RUN') {
        for (const command of args.split('&&').map((c) => c.trim())) {
          if (/^(apt-get|rm -rf \/var\/lib\/apt)/.test(command)) continue; // the compiler toolchain for native addons
          if (/^npm ci\b/.test(command)) {
            // Entry by entry into a directory of its own: the build writes caches into node_modules
            // (Vite's .vite-temp), and the checkout's own must stay untouched.
            fs.mkdirSync(path.join(buildDir, 'node_modules'));
            for (const entry of fs.readdirSync(realModules)) {
              if (!entry.startsWith('.vite'))
                fs.symlinkSync(path.join(realModules, entry), path.join(buildDir, 'node_modules', entry));
            }
          } else if (command === 'npm run build') {
            const run = spawnSync('npm', ['run', 'build'], {
              cwd: buildDir,
              encoding: 'utf8',
              env: { PATH: process.env.PATH ?? '', HOME: dir },
            });
            assert.equal(run.status, 0, `npm run build failed:\n${run.stdout}\n${run.stderr}`);
          } else if (/^npm prune --omit=dev\b/.test(command)) {
            // The shell expands the command with the build arguments' defaults, as `docker build` would.
            const expanded = spawnSync('sh', ['-c', `echo ${command}`], {
              encoding: 'utf8',
              env: { PATH: process.env.PATH ?? '', ...buildArgs },
            });
            const flags = expanded.stdout.trim().split(/\s+/).slice(2);
            assert.ok(
              flags.every((flag) => flag === '--omit=dev' || flag === '--omit=optional'),
              expanded.stdout,
            );
            fs.rmSync(path.join(buildDir, 'node_modules'), { recursive: true });
            const kept = prunedNodeModules(
              path.join(buildDir, 'package-lock.json'),
              realModules,
              path.join(buildDir, 'node_modules'),
              flags.includes('--omit=optional'),
            );
            assert.ok(kept.includes('fastify') && !kept.includes('typescript'), kept.join(', '));
            // Web-only packages stay out of the image, and the AWS SDK unless asked for (WITH_S3=yes).
            for (const webOnly of [
              'highlight.js',
              'marked-highlight',
              'marked',
              'dompurify',
              '@aws-sdk/client-s3',
              '@aws-sdk/lib-storage',
            ]) {
              assert.ok(!kept.includes(webOnly), `${webOnly} is in the image`);
            }
            pruned = true;
          } else {
            assert.fail(`the Dockerfile's build stage runs "${command}", which this test does not replay yet`);
          }
        }
      } else {
        assert.fail(`unexpected ${op} in the build stage`);
      }
    }
    assert.ok(pruned, 'the build stage prunes dev dependencies');
    assert.ok(
      fs.existsSync(path.join(buildDir, 'dist/main.js')) &&
        fs.existsSync(path.join(buildDir, 'dist/public/index.html')),
      'server and client built',
    );

    const env: Record<string, string> = {};
    let cmd: string[] | undefined;
    for (const { op, args } of runtime.steps) {
      if (op === 'ENV') {
        for (const [, name, value] of args.matchAll(/(\w+)=(\S+)/g)) env[name!] = value!;
      } else if (op === 'WORKDIR') {
        fs.mkdirSync(runDir, { recursive: true });
      } else if (op === 'COPY') {
        const [sources, dest, fromStage] = copyArgs(args);
        for (const source of sources) {
          const from =
            fromStage === undefined ? path.join(ROOT, source) : path.join(buildDir, path.relative('/app', source));
          if (fromStage !== undefined) assert.equal(fromStage, build.name);
          fs.cpSync(
            from,
            dest.endsWith('/') ? path.join(runDir, dest, path.basename(source)) : path.join(runDir, dest),
            { recursive: true, verbatimSymlinks: true },
          );
        }
      } else if (op === 'CMD') {
        cmd = JSON.parse(args) as string[];
      } else if (!['RUN', 'USER', 'VOLUME', 'EXPOSE', 'HEALTHCHECK'].includes(op)) {
        assert.fail(`unexpected ${op} in the runtime stage`);
      }
    }
    assert.deepEqual(cmd, ['node', 'dist/main.js']);
    assert.equal(env.NODE_ENV, 'production');

    const data = path.join(dir, 'data');
    server = startProcess(process.execPath, ['--preserve-symlinks', ...cmd!.slice(1)], {
      cwd: runDir,
      env: {
        ...env,
        HOME: dir,
        HOST: '127.0.0.1', // the image listens on 0.0.0.0; here only the loopback
        PORT: '0',
        DATABASE_URL: `sqlite:${path.join(data, 'vellum.db')}`,
        JWT_SECRET: randomBytes(32).toString('base64url'),
        CSRF_SECRET: randomBytes(32).toString('base64url'),
        PWNED_PASSWORDS_URL: 'off',
      },
    });
    const base = `http://127.0.0.1:${await server.port(30_000)}`;

    const home = await fetch(`${base}/`);
    assert.equal(home.status, 200);
    assert.match(home.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await home.text(), /<script type="module"[^>]* src="\/assets\//);
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(((await ready.json()) as { status: string }).status, 'ready');
    const username = uniqueName('image');
    const signup = await fetch(`${base}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: GOOD_PASSWORD }),
    });
    assert.equal(signup.status, 201, await signup.clone().text());
    assert.equal(((await signup.json()) as { username: string }).username, username);
    // Imported on demand (passkeys.service.ts): a package the prune dropped would show only here.
    const passkey = await fetch(`${base}/api/auth/passkey/options`, { method: 'POST' });
    assert.equal(passkey.status, 200, await passkey.clone().text());
    assert.equal(typeof ((await passkey.json()) as { challenge: unknown }).challenge, 'string');

    server.child.kill('SIGTERM');
    assert.deepEqual(await exitWithin(server, 20_000), { code: 0, signal: null }, server.output());

    // Without the optional SDK, asking for S3 storage stops at start-up and says how to get it.
    const s3 = startProcess(process.execPath, ['--preserve-symlinks', ...cmd!.slice(1)], {
      cwd: runDir,
      env: {
        ...env,
        HOME: dir,
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: `sqlite:${path.join(data, 'vellum.db')}`,
        JWT_SECRET: randomBytes(32).toString('base64url'),
        CSRF_SECRET: randomBytes(32).toString('base64url'),
        PWNED_PASSWORDS_URL: 'off',
        ATTACHMENT_STORAGE: 's3',
        S3_BUCKET: 'attachments',
      },
    });
    assert.deepEqual(await exitWithin(s3, 20_000), { code: 2, signal: null }, s3.output());
    assert.match(
      s3.output(),
      /configuration error: ATTACHMENT_STORAGE=s3 needs the AWS SDK \(@aws-sdk\/client-s3, @aws-sdk\/lib-storage\), which this install left out/,
    );

    // One build per test run: scripts/test.mjs runs the browser tests against this one (a build
    // from exactly the files the Dockerfile copies) instead of building the checkout again.
    const handOver = process.env.VELLUM_TEST_DIST;
    if (handOver !== undefined) {
      fs.cpSync(path.join(buildDir, 'dist'), `${handOver}.partial`, { recursive: true });
      fs.renameSync(`${handOver}.partial`, handOver);
    }
  });
});
