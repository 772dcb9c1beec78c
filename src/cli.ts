#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createPasswordHasher } from './passwords/password-hasher.js';
import { policyFromConfig } from './passwords/password-policy.js';
import { endEverySession } from './auth/end-sessions.js';
import { CommandError, createAdmin, pruneSessions, resetPassword, type CommandDeps } from './cli/commands.js';
import { backupSqlite, restoreDatabase } from './cli/backup.js';
import { commandUsage, findCommand, HELP_HINT, usage, UsageError } from './cli/usage.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { addEffectSink } from './db/effects.js';
import { createBus } from './events/bus.js';
import { ChangePublisher } from './events/publisher.js';
import { migrateToLatest } from './db/migrate.js';
import { runTask, runTasks } from './jobs/maintenance.js';
import { HISTORY_RETENTION_TASK, maintenanceTasks } from './jobs/tasks.js';
import { pruneHistory, versionRanges } from './notes/retention.js';
import { loggerOptions } from './logger.js';

async function readPassword(config: Config): Promise<string> {
  if (config.cliPassword !== undefined) return config.cliPassword;
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  let input = '';
  for await (const chunk of process.stdin) {
    input += String(chunk);
    if (input.includes('\n')) break;
  }
  return input.split(/\r?\n/)[0] ?? '';
}

async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { help: { type: 'boolean', short: 'h' } },
  });
  const [command, arg, ...extra] = positionals;
  // `vellum help [COMMAND]`, `vellum --help`, `vellum COMMAND --help`
  const topic = command === 'help' ? arg : values.help === true ? (command ?? null) : undefined;
  if (topic !== undefined || command === 'help') {
    if (topic === undefined || topic === null) {
      process.stdout.write(`${usage()}\n`);
      return 0;
    }
    const known = findCommand(topic);
    if (known === undefined) throw new UsageError(`unknown command "${topic}"; ${HELP_HINT}`);
    process.stdout.write(`${commandUsage(known)}\n`);
    return 0;
  }
  if (command === undefined) {
    process.stderr.write(`${usage()}\n`);
    return 2;
  }
  // Checked before the database is opened: a mistyped command must not create or migrate anything.
  const known = findCommand(command);
  if (known === undefined) throw new UsageError(`unknown command "${command}"; ${HELP_HINT}`);
  if ((arg === undefined ? 0 : 1) + extra.length > known.maxArgs) {
    throw new UsageError(
      `${command} takes ${known.maxArgs === 0 ? 'no arguments' : `at most ${known.maxArgs} argument`}; run "vellum ${command} --help"`,
    );
  }
  const config = loadConfig();
  // These two never open the database through the app: they must not migrate it (cli/backup.ts).
  if (command === 'backup' || command === 'restore') {
    if (arg === undefined) throw new UsageError(`${command} needs a FILE; run "vellum ${command} --help"`);
    if (command === 'backup') {
      const done = backupSqlite(config.database, arg);
      process.stdout.write(
        `backed up ${done.notes} notes and ${done.versions} versions to ${done.file} (${done.bytes} bytes)\n`,
      );
    } else {
      const done = await restoreDatabase(config.database, arg);
      process.stdout.write(
        `restored ${done.notes} notes and ${done.versions} versions from ${done.file} into ${done.database}\n`,
      );
      if (done.previous !== undefined) process.stdout.write(`the database it replaced is kept as ${done.previous}\n`);
    }
    return 0;
  }
  // Checked before the database is opened (and migrated): a usage error changes nothing.
  if (command === 'reset-password' && arg === undefined)
    throw new UsageError('reset-password needs a USERNAME; run "vellum reset-password --help"');
  // Log lines go to stderr: stdout carries only the command's result, so scripts can read it.
  const log = pino(
    { ...loggerOptions(config), level: config.logLevel === 'info' ? 'warn' : config.logLevel },
    pino.destination(2),
  );
  const database = openDatabase(config.database);
  const deps: CommandDeps = {
    db: database.db,
    policy: policyFromConfig(config, log),
    hasher: createPasswordHasher({ cost: config.argon2Cost }),
    log,
    sessions: { endAll: endEverySession },
  };
  try {
    // Every command works on an up-to-date schema.
    const applied = await migrateToLatest(database.db);
    switch (command) {
      case 'migrate':
        process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
        return 0;
      case 'create-admin': {
        const username = arg ?? config.admin?.username;
        if (username === undefined || username === '')
          throw new CommandError('give a USERNAME (or set ADMIN_USERNAME)');
        // VELLUM_PASSWORD or standard input, never ADMIN_PASSWORD: that is the bootstrap administrator's,
        // set wherever the server's environment is loaded, and must not become this one's silently.
        const created = await createAdmin(deps, username, await readPassword(config));
        process.stdout.write(`created administrator "${created}"\n`);
        return 0;
      }
      case 'reset-password': {
        if (arg === undefined) throw new UsageError('reset-password needs a USERNAME'); // checked above
        await resetPassword(deps, arg, await readPassword(config));
        process.stdout.write(`password reset for "${arg.toLowerCase()}"; all of its sessions were ended\n`);
        return 0;
      }
      case 'prune-sessions':
        process.stdout.write(`deleted ${await pruneSessions(deps)} refresh tokens\n`);
        return 0;
      case 'maintenance': {
        let failed = false;
        // The trash purge deletes notes: the server's live streams are told, as when the server
        // purges, through the bus every instance hears (none on SQLite without Redis: no one to tell).
        const bus = await createBus(config, log);
        const publisher = new ChangePublisher(database.db, bus, log);
        const removeSink = addEffectSink(database.db, publisher);
        let outcomes;
        try {
          outcomes = await runTasks(database, maintenanceTasks(config), new Date());
        } finally {
          removeSink();
          await publisher.settled();
          await bus.close();
        }
        for (const outcome of outcomes) {
          if (outcome.status === 'done') {
            process.stdout.write(`${outcome.task}: ${outcome.summary}\n`);
          } else if (outcome.status === 'skipped') {
            process.stdout.write(`${outcome.task}: skipped, another instance is running it\n`);
          } else if (outcome.status === 'not-due') {
            process.stdout.write(`${outcome.task}: not due, last run ${outcome.lastRunAt}\n`); // only scheduled runs wait
          } else {
            failed = true;
            log.error({ err: outcome.error, task: outcome.task }, 'maintenance task failed');
            process.stdout.write(`${outcome.task}: failed\n`);
          }
        }
        return failed ? 1 : 0;
      }
      case 'prune-history': {
        if (config.historyRetention === null) {
          process.stdout.write('HISTORY_RETENTION is off: every version is kept\n');
          return 0;
        }
        const policy = config.historyRetention;
        // Through the runner, so it takes the same lock as the hourly job on PostgreSQL.
        const outcome = await runTask(
          database,
          {
            name: HISTORY_RETENTION_TASK,
            run: async (db, now) => ({
              ...(await pruneHistory(db, now, policy, (noteId, versions) => {
                process.stdout.write(`note ${noteId}: deleted versions ${versionRanges(versions)}\n`);
              })),
            }),
          },
          new Date(),
        );
        if (outcome.status === 'failed') throw outcome.error;
        if (outcome.status !== 'done') {
          process.stdout.write('skipped: another instance is pruning history right now\n');
          return 0;
        }
        process.stdout.write(`deleted ${outcome.counts.versions} versions of ${outcome.counts.notes} notes\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"; ${HELP_HINT}`);
    }
  } finally {
    await database.close();
  }
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    // Node's parseArgs explains at length; the first sentence is the reason.
    const reason = (error as Error).message.split(/\.\s|\n/)[0]!.replace(/\.$/, '');
    process.stderr.write(`vellum: ${reason}${error instanceof UsageError ? '' : `; ${HELP_HINT}`}\n`);
    process.exitCode = 2;
  } else if (error instanceof CommandError || error instanceof ConfigError) {
    process.stderr.write(`vellum: ${(error as Error).message}\n`);
    process.exitCode = 1;
  } else {
    // The database cannot be opened or migrated (a file that is no database, PostgreSQL refusing the
    // connection…): one line for the operator, not a stack trace.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`vellum: failed: ${message.split('\n')[0]}\n`);
    process.exitCode = 1;
  }
}
