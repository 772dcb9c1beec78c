/** What `vellum --help` and `vellum COMMAND --help` print; also the list of commands the CLI knows. */

export interface CommandHelp {
  readonly name: string;
  /** Positional arguments, as shown in the usage line. */
  readonly args: string;
  /** The most positional arguments the command takes. */
  readonly maxArgs: number;
  readonly summary: string;
  readonly details: string;
}

const PASSWORD_INPUT = 'The password is read from VELLUM_PASSWORD, or else from the first line of standard input.';

export const COMMANDS: readonly CommandHelp[] = [
  {
    name: 'migrate',
    args: '',
    maxArgs: 0,
    summary: 'apply pending database migrations',
    details:
      'Brings the database named by DATABASE_URL up to date and prints what it applied. The server does this at start-up too.',
  },
  {
    name: 'create-admin',
    args: '[USERNAME]',
    maxArgs: 1,
    summary: 'create an administrator (USERNAME or ADMIN_USERNAME)',
    details: `Creates an administrator account; the username and password follow the signup rules. ${PASSWORD_INPUT}`,
  },
  {
    name: 'reset-password',
    args: 'USERNAME',
    maxArgs: 1,
    summary: "set a new password and end all of the user's sessions",
    details: `Sets the user's password (signup rules apply) and revokes every refresh token of theirs. ${PASSWORD_INPUT}`,
  },
  {
    name: 'prune-sessions',
    args: '',
    maxArgs: 0,
    summary: 'delete refresh tokens that can never be used again',
    details: 'Deletes expired and revoked refresh tokens and prints how many.',
  },
  {
    name: 'maintenance',
    args: '',
    maxArgs: 0,
    summary: 'run every periodic housekeeping task once now',
    details:
      'Runs the tasks the server runs hourly (history retention, trash purge, search index, audit retention, dead refresh tokens) now, however recently they ran, and prints what each did.',
  },
  {
    name: 'prune-history',
    args: '',
    maxArgs: 0,
    summary: 'apply HISTORY_RETENTION now and print the versions it deleted',
    details:
      'Deletes the old versions HISTORY_RETENTION does not keep (never the current or a labelled one), one line per note with the numbers deleted, then the totals. With HISTORY_RETENTION=off it deletes nothing.',
  },
  {
    name: 'backup',
    args: 'FILE',
    maxArgs: 1,
    summary: 'copy the SQLite database to FILE, consistently, while the service runs',
    details:
      'Writes one self-contained, checked copy of the database (recent writes in the -wal file included) to FILE, which must not exist yet. It does not migrate the database. For PostgreSQL use pg_dump -Fc (docs/operations.md, "Back up").',
  },
  {
    name: 'restore',
    args: 'FILE',
    maxArgs: 1,
    summary: 'replace the database with the backup FILE (service stopped)',
    details:
      'SQLite: checks the backup, refuses while any process has the database open, keeps the replaced database beside it as DATABASE.before-restore-TIME, and puts the backup in its place. PostgreSQL: FILE is a pg_dump (custom format or plain SQL); it is restored into a new database with pg_restore or psql, checked (complete, a Vellum database, not from a newer Vellum), and only then swapped in by renaming: the replaced database is kept as NAME_before_restore_TIME; refused while anyone is connected to NAME. Start the service afterwards; it applies any newer migrations.',
  },
];

export function findCommand(name: string): CommandHelp | undefined {
  return COMMANDS.find((command) => command.name === name);
}

export function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => `${c.name} ${c.args}`.length)) + 2;
  const lines = COMMANDS.map((c) => `  ${`${c.name} ${c.args}`.padEnd(width)}${c.summary}`);
  return `Usage: vellum <command> [arguments]

Commands (they use the same environment variables as the server, DATABASE_URL first):
${lines.join('\n')}
  ${'help [COMMAND]'.padEnd(width)}show this text, or one command's

Options:
  ${'-h, --help'.padEnd(width)}show help (after a command: that command's)

Exit status: 0 done, 1 the command failed (the reason is printed), 2 a usage error.`;
}

export function commandUsage(command: CommandHelp): string {
  return `Usage: vellum ${command.name}${command.args === '' ? '' : ` ${command.args}`}

${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.
${command.details}`;
}

/** A mistake in how the CLI was called: one line on stderr, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const HELP_HINT = 'run "vellum --help" for the commands';
