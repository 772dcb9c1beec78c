import cluster from 'node:cluster';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { bootstrapAdmin } from './accounts/bootstrap-admin.js';
import { createPasswordHasher } from './passwords/password-hasher.js';
import { policyFromConfig } from './passwords/password-policy.js';
import { runWorkers } from './cluster.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { removeOldSnapshots, upgradeDatabase } from './db/upgrade.js';
import { startMaintenance, type Maintenance } from './jobs/maintenance.js';
import { maintenanceTasks } from './jobs/tasks.js';
import { loggerOptions, serverLogDestination } from './logger.js';
import { lowerBackgroundThreadPriority, startThreadPool } from './ops/thread-priority.js';
import { drainAndClose } from './ops/graceful-close.js';
import { preloadPasskeys } from './mfa/passkeys.service.js';
import { withDevelopmentSecrets } from './ops/development-secrets.js';
import { readyLine } from './ops/ready-line.js';
import { requireS3Sdk } from './attachments/s3-storage.js';

async function readConfig(): Promise<{ config: Config; secretsFile: string | undefined }> {
  try {
    const { env, file } = withDevelopmentSecrets(process.env);
    const config = loadConfig(env);
    if (config.attachmentStorage.kind === 's3') await requireS3Sdk();
    return { config, secretsFile: file };
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`vellum: configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  // Signals are caught from the first instant: SIGTERM during a schema upgrade lets the migration in
  // progress commit, starts no other, and exits 0 (docker stop during an upgrade used to kill it
  // mid-migration; issue #43). Once the app listens, the same signal drains and closes it.
  const startedAt = new Date();
  const shutdown = installShutdown();
  const { config, secretsFile } = await readConfig();
  const log = pino(loggerOptions(config), serverLogDestination());
  shutdown.setLog(log);
  if (secretsFile !== undefined) {
    log.info(
      { file: secretsFile },
      'JWT_SECRET/CSRF_SECRET not set: using development secrets kept beside the database, so sign-ins survive a restart',
    );
  }
  if (config.secretsGenerated) {
    log.warn(
      'JWT_SECRET/CSRF_SECRET not set: using random secrets for this process; tokens will not survive a restart',
    );
  }
  const pause =
    config.testPauseAt === undefined
      ? undefined
      : async (point: string) => {
          if (point !== config.testPauseAt) return;
          log.info({ point }, `paused at ${point}`);
          log.flush();
          // Held until a signal: SIGTERM/SIGINT (shutting down), or SIGUSR2 to carry on.
          // The interval keeps the process alive meanwhile (SQLite's connection holds no handle).
          const alive = setInterval(() => {}, 60_000);
          await Promise.race([shutdown.requested, new Promise((resolve) => process.once('SIGUSR2', resolve))]);
          clearInterval(alive);
        };
  let database: ReturnType<typeof openDatabase>;
  try {
    database = openDatabase(config.database, { onPoolError: (err) => log.error({ err }, 'database pool error') });
  } catch (error) {
    // A file that is no SQLite database, a directory that cannot be made: said in one line.
    log.fatal(
      `start-up failed: the database cannot be opened: ${error instanceof Error ? error.message : String(error)}`,
    );
    log.flush();
    process.exit(1);
  }
  const stopIfAsked = async (stage: string): Promise<void> => {
    if (!shutdown.isRequested()) return;
    log.info({ stage }, `shut down during start-up (${stage})`);
    await database.close().catch(() => {});
    process.exit(0);
  };
  try {
    await stopIfAsked('before migrations');
    const { applied } = await upgradeDatabase(database, {
      config: config.database,
      log,
      shouldStop: shutdown.isRequested,
      ...(pause === undefined ? {} : { pause }),
    });
    if (applied.length > 0) log.info({ applied }, 'applied database migrations');
    await stopIfAsked(applied.length > 0 ? `after migration ${applied.at(-1)}` : 'after migrations');
    const hasher = createPasswordHasher({ cost: config.argon2Cost });
    await bootstrapAdmin({ db: database.db, policy: policyFromConfig(config, log), hasher, log }, config.admin);
    let maintenance: Maintenance | undefined;
    const app = await buildApp({
      config,
      database,
      logger: log,
      hasher,
      background: () => maintenance?.running() ?? [],
    });
    shutdown.whenUp(async (drainMs) => {
      // /readyz answers 503 at once; the listener keeps serving for the drain period (ops/graceful-close.ts).
      let housekeepingDone = false;
      const housekept = maintenance?.stop().finally(() => {
        housekeepingDone = true;
      });
      await drainAndClose(app, drainMs);
      // Housekeeping on PostgreSQL runs without a reply time-out (a VACUUM may rightly take long).
      // Still running once the requests are done, it is abandoned: its batch rolls back and a later
      // pass takes it up. Waited for, a statement caught by a silent network held the exit past its
      // deadline.
      if (!housekeepingDone) {
        const ended = database.abandonUnbounded();
        if (ended > 0) log.warn({ connections: ended }, 'housekeeping still running at shutdown: abandoned');
      }
      await housekept;
      await database.close();
    }, config.shutdownDrainMs);
    await startThreadPool();
    const lowered = lowerBackgroundThreadPriority();
    await app.listen({ port: config.port, host: config.host });
    // Housekeeping (and the back-fills an upgrade leaves, such as old notes' tags) once listening, at
    // start-up and hourly: a large back-fill no longer keeps the port closed. On PostgreSQL one
    // instance at a time runs each task; each works in committed batches, so a restart resumes it.
    if (!shutdown.isRequested()) {
      maintenance = startMaintenance({
        database,
        tasks: maintenanceTasks(config),
        log,
        ...(pause === undefined ? {} : { pause }),
      });
    }
    if (cluster.isPrimary) process.stderr.write(readyLine(config, app.server.address()));
    removeOldSnapshots(config.database, startedAt, log);
    preloadPasskeys();
    log.debug({ threads: lowered }, 'background threads run at lower CPU priority than the event loop');
  } catch (error) {
    const message = `start-up failed: ${error instanceof Error ? error.message : String(error)}`;
    // The system's refusals (a port in use, a HOST that does not resolve, no permission) are the
    // operator's to fix and say all in their message; anything else keeps its stack for a report.
    if (typeof (error as { syscall?: unknown }).syscall === 'string') log.fatal(message);
    else log.fatal({ err: error }, message);
    await database.close().catch(() => {});
    process.exit(1);
  }
}

/** Time for in-flight requests after the drain, before the process gives up and exits 1. */
const CLOSE_TIMEOUT_MS = 10_000;

interface Shutdown {
  setLog(log: pino.Logger): void;
  isRequested(): boolean;
  /** Resolves when SIGTERM/SIGINT first arrives. */
  readonly requested: Promise<void>;
  /** The app is up: a signal (past or future) now drains and closes it with `close`. */
  whenUp(close: (drainMs: number) => Promise<void>, configuredDrainMs: number): void;
}

/**
 * SIGTERM (a process manager, `docker stop`, the cluster primary) drains for SHUTDOWN_DRAIN_SECONDS
 * first; SIGINT (Ctrl-C at a terminal, where no load balancer is watching) closes at once. A signal
 * before the app is up is remembered: start-up stops at its next step (main).
 */
function installShutdown(): Shutdown {
  let log: pino.Logger | undefined;
  let signalled: NodeJS.Signals | undefined;
  let up: { close: (drainMs: number) => Promise<void>; drainMs: number } | undefined;
  let closing = false;
  let markRequested!: () => void;
  const requested = new Promise<void>((resolve) => {
    markRequested = resolve;
  });
  const close = () => {
    if (closing || signalled === undefined || up === undefined) return;
    closing = true;
    const drainMs = signalled === 'SIGTERM' ? up.drainMs : 0;
    log?.info({ signal: signalled, drainMs }, 'shutting down');
    // In-flight requests get a bounded time to finish.
    const timer = setTimeout(() => {
      log?.error('shutdown timed out; exiting');
      process.exit(1);
    }, drainMs + CLOSE_TIMEOUT_MS);
    timer.unref();
    up.close(drainMs).then(
      () => process.exit(0),
      (err: unknown) => {
        log?.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled !== undefined) return;
    signalled = signal;
    markRequested();
    if (up === undefined) {
      log?.info({ signal }, 'shutting down once the current start-up step (a migration) has finished');
      // Before the logger exists (reading configuration) there is nothing to finish.
      if (log === undefined) process.exit(0);
      return;
    }
    close();
  };
  // `on`, not `once`: a process manager that signals the whole group (npm start) delivers SIGTERM twice,
  // and a second one with no listener would kill the process mid-shutdown with status 143.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    setLog: (value) => {
      log = value;
    },
    isRequested: () => signalled !== undefined,
    requested,
    whenUp(closeApp, drainMs) {
      up = { close: closeApp, drainMs };
      close();
    },
  };
}

// WORKERS=N: N processes of main() sharing the port (src/cluster.ts); 1 (default) runs it right here.
await runWorkers(main);
