import cluster from 'node:cluster';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { bootstrapAdmin } from './accounts/bootstrap-admin.js';
import { createPasswordHasher } from './passwords/password-hasher.js';
import { policyFromConfig } from './passwords/password-policy.js';
import { runWorkers } from './cluster.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { startMaintenance } from './jobs/maintenance.js';
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
  const { config, secretsFile } = await readConfig();
  const log = pino(loggerOptions(config), serverLogDestination());
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
  const database = openDatabase(config.database, { onPoolError: (err) => log.error({ err }, 'database pool error') });
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) log.info({ applied }, 'applied database migrations');
    const hasher = createPasswordHasher({ cost: config.argon2Cost });
    await bootstrapAdmin({ db: database.db, policy: policyFromConfig(config, log), hasher, log }, config.admin);
    const app = await buildApp({ config, database, logger: log, hasher });
    // Housekeeping at start-up and hourly; on PostgreSQL one instance at a time runs each task.
    const maintenance = startMaintenance({ database, tasks: maintenanceTasks(config), log });
    installShutdown(
      async (drainMs) => {
        // /readyz answers 503 at once; the listener keeps serving for the drain period (ops/graceful-close.ts).
        await Promise.all([drainAndClose(app, drainMs), maintenance.stop()]);
        await database.close();
      },
      log,
      config.shutdownDrainMs,
    );
    await startThreadPool();
    const lowered = lowerBackgroundThreadPriority();
    await app.listen({ port: config.port, host: config.host });
    if (cluster.isPrimary) process.stderr.write(readyLine(config, app.server.address()));
    preloadPasskeys();
    log.debug({ threads: lowered }, 'background threads run at lower CPU priority than the event loop');
  } catch (error) {
    log.fatal({ err: error }, `start-up failed: ${error instanceof Error ? error.message : String(error)}`);
    await database.close().catch(() => {});
    process.exit(1);
  }
}

/** Time for in-flight requests after the drain, before the process gives up and exits 1. */
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * SIGTERM (a process manager, `docker stop`, the cluster primary) drains for SHUTDOWN_DRAIN_SECONDS
 * first; SIGINT (Ctrl-C at a terminal, where no load balancer is watching) closes at once.
 */
function installShutdown(close: (drainMs: number) => Promise<void>, log: pino.Logger, configuredDrainMs: number): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    const drainMs = signal === 'SIGTERM' ? configuredDrainMs : 0;
    log.info({ signal, drainMs }, 'shutting down');
    // In-flight requests get a bounded time to finish.
    const timer = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, drainMs + CLOSE_TIMEOUT_MS);
    timer.unref();
    close(drainMs).then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: a process manager that signals the whole group (npm start) delivers SIGTERM twice,
  // and a second one with no listener would kill the process mid-shutdown with status 143.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

// WORKERS=N: N processes of main() sharing the port (src/cluster.ts); 1 (default) runs it right here.
await runWorkers(main);
