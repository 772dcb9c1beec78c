import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { withDevelopmentSecrets } from './ops/development-secrets.js';
import { readyLine } from './ops/ready-line.js';
import { loggerOptions } from './logger.js';

/**
 * WORKERS=N runs N server processes that share the listening port through node:cluster (the primary
 * accepts connections and hands them to the workers round-robin). The default, 1, runs the server
 * in this process with no cluster at all.
 *
 * Each worker is a whole server with its own database pool (DATABASE_POOL_MAX connections each on
 * PostgreSQL), password-hash queue, metrics registry and in-process rate-limit counters. Tokens are
 * stateless and refresh tokens live in the database, so any worker can serve any request.
 */
export const MAX_WORKERS = 64;

type Env = Record<string, string | undefined>;

/** WORKERS: a whole number from 1 to 64, default 1. Process topology, so it is read here, not in config.ts. */
export function readWorkers(env: Env = process.env): number {
  const raw = env.WORKERS?.trim();
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > MAX_WORKERS) {
    throw new ConfigError(`WORKERS must be a whole number from 1 to ${MAX_WORKERS}, got "${raw}"`);
  }
  return value;
}

/**
 * A worker that dies is replaced after a back-off that doubles with each death in the last
 * CRASH_WINDOW_MS (0.25 s, 0.5 s, 1 s … at most 10 s); the service stops only when workers keep
 * dying: CRASH_LIMIT deaths within the window. One death, even right after a start, never takes
 * the healthy workers down with it.
 */
export const CRASH_LIMIT = 5;
export const CRASH_WINDOW_MS = 60_000;
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 10_000;
/** Time for the workers to finish after their drain (SHUTDOWN_DRAIN_SECONDS). */
const SHUTDOWN_TIMEOUT_MS = 15_000;

/** How long to wait before replacing a worker, given how many died within the window (this one included). */
export function restartDelayMs(recentDeaths: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, recentDeaths - 1));
}

/**
 * Runs `serve` (the whole single-process server: migrate, bootstrap, listen) in this process when
 * WORKERS is 1 or this process is already a worker; otherwise becomes the primary of WORKERS
 * processes that each run `serve`.
 *
 * The first worker starts alone and the others only once it listens, so database migrations and the
 * admin bootstrap run once, never concurrently. A failure while the service first starts (a bad
 * database URL, a failing migration) stops it with the worker's exit code. Afterwards a worker that
 * exits unexpectedly, or a replacement that fails to start, is replaced with back-off (above).
 * SIGTERM/SIGINT reach every worker, which drains and shuts down as a single process would.
 */
export async function runWorkers(serve: () => Promise<void>, env: Env = process.env): Promise<void> {
  if (cluster.isWorker) {
    await serve();
    return;
  }
  let workers: number;
  let log: pino.Logger;
  let workerEnv: Env = {};
  let drainMs = 0;
  let config: Config;
  try {
    workers = readWorkers(env);
    if (workers === 1) {
      await serve();
      return;
    }
    // Validate everything once here, rather than have every worker fail the same way.
    config = loadConfig(withDevelopmentSecrets(env).env);
    drainMs = config.shutdownDrainMs;
    if (config.database.kind === 'sqlite' && config.database.filename === ':memory:') {
      throw new ConfigError(
        'WORKERS above 1 needs a database the workers share; sqlite::memory: is private to each process',
      );
    }
    log = pino(loggerOptions(config)).child({ role: 'primary' });
    if (config.redisUrl === undefined) {
      // Each worker counts on its own: every rate limit and the login lockout are multiplied by N.
      log.warn(
        { workers },
        `WORKERS=${workers} without REDIS_URL: every rate limit and the login lockout are counted per worker, so they are ${workers} times looser; set REDIS_URL to share the counters`,
      );
    }
    if (config.secretsGenerated) {
      // Every worker must sign and verify with the same secrets, so generate them once, here.
      log.warn(
        'JWT_SECRET/CSRF_SECRET not set: using random secrets shared by the workers; tokens will not survive a restart',
      );
      workerEnv = { JWT_SECRET: config.jwtSecret, CSRF_SECRET: config.csrfSecret };
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`vellum: configuration error: ${error.message}\n`);
    process.exit(2);
  }

  let stopping = false;
  const listeningSince = new Map<Worker, number>();
  const deaths: number[] = [];

  const fork = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork(workerEnv);
      const onExit = (code: number | null, signal: string | null) =>
        reject(
          Object.assign(
            new Error(`worker ${worker.process.pid} exited during start-up (code ${code}, signal ${signal})`),
            { exitCode: code },
          ),
        );
      worker.once('exit', onExit);
      worker.once('listening', () => {
        worker.off('exit', onExit);
        listeningSince.set(worker, Date.now());
        resolve(worker);
      });
    });

  const shutdown = async (exitCode: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      log.error('workers did not stop in time; exiting');
      process.exit(1);
    }, drainMs + SHUTDOWN_TIMEOUT_MS).unref();
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    await Promise.all(
      alive.map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker.once('exit', (code) => {
              if (code !== 0 && code !== null && exitCode === 0) exitCode = code;
              resolve();
            });
            worker.process.kill(signal);
          }),
      ),
    );
    process.exit(exitCode);
  };

  /** A worker died (after the service started): replace it after a back-off, or give up if they keep dying. */
  const replace = (why: Record<string, unknown>, exitCode: number) => {
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && deaths[0]! <= now - CRASH_WINDOW_MS) deaths.shift();
    if (deaths.length >= CRASH_LIMIT) {
      log.fatal(
        { ...why, deaths: deaths.length, windowMs: CRASH_WINDOW_MS },
        `workers keep dying (${deaths.length} within ${CRASH_WINDOW_MS / 1000} s); stopping the service`,
      );
      void shutdown(exitCode || 1);
      return;
    }
    const delayMs = restartDelayMs(deaths.length);
    log.error({ ...why, delayMs }, `worker exited unexpectedly; starting a replacement in ${delayMs} ms`);
    setTimeout(() => {
      if (stopping) return;
      fork().then(
        (worker) => log.info({ workerPid: worker.process.pid }, 'replacement worker listening'),
        (error: unknown) => replace({ err: error }, (error as { exitCode?: number }).exitCode ?? 1),
      );
    }, delayMs);
  };

  cluster.on('exit', (worker, code, signal) => {
    const since = listeningSince.get(worker);
    listeningSince.delete(worker);
    if (stopping || since === undefined) return; // start-up failures are handled where fork() was called
    replace({ workerPid: worker.process.pid, code, signal, uptimeMs: Date.now() - since }, code);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      log.info({ signal }, 'shutting down workers');
      void shutdown(0, signal);
    });
  }

  try {
    await fork(); // alone first: migrations and the admin bootstrap run exactly once
    await Promise.all(Array.from({ length: workers - 1 }, fork));
    log.info({ workers, workerPids: [...listeningSince.keys()].map((w) => w.process.pid) }, 'all workers listening');
    process.stderr.write(readyLine(config, { port: config.port }));
  } catch (error) {
    if (stopping) return;
    log.fatal({ err: error }, `start-up failed: ${error instanceof Error ? error.message : String(error)}`);
    const code = (error as { exitCode?: unknown }).exitCode;
    await shutdown(typeof code === 'number' && code !== 0 ? code : 1);
  }
}
