import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as accounts from './migrations/2026-11-22-01-accounts.js';
import * as notes from './migrations/2026-11-22-02-notes.js';
import * as authEvents from './migrations/2026-11-22-03-auth-events.js';
import * as versionMetadata from './migrations/2026-11-23-02-1-version-metadata.js';
import * as trash from './migrations/2026-11-23-03-1-trash.js';
import * as search from './migrations/2026-11-23-03-2-search.js';
import * as searchOneIndex from './migrations/2026-11-23-03-3-search-one-index.js';
import * as searchCurrent from './migrations/2026-11-23-06-1-search-current.js';
import * as searchEntryView from './migrations/2026-11-23-06-2-search-entry-view.js';
import * as sessionGeneration from './migrations/2026-11-23-01-1-session-generation.js';
import * as exportOrder from './migrations/2026-11-24-19-a-export-order.js';
import * as maintenanceRuns from './migrations/2026-11-24-26-f-maintenance-runs.js';
import * as organise from './migrations/2026-11-24-31-a-organise.js';
import * as searchUnarchived from './migrations/2026-11-24-31-b-search-unarchived.js';
import * as secondFactor from './migrations/2026-11-25-32-a-second-factor.js';
import * as attachments from './migrations/2026-11-25-32-b-attachments.js';
import * as accessTokens from './migrations/2026-11-25-32-c-access-tokens.js';
import * as shares from './migrations/2026-11-25-32-d-shares.js';
import * as webdav from './migrations/2026-11-25-33-a-webdav.js';
import * as members from './migrations/2026-11-25-33-b-members.js';
import * as saveFunction from './migrations/2026-11-25-34-a-save-function.js';
import * as sessionAccessToken from './migrations/2026-11-26-36-a-session-access-token.js';
import * as foldersOwner from './migrations/2026-11-26-37-f-folders-owner.js';
import * as accessJtiIndex from './migrations/2026-11-26-37-s-access-jti-index.js';
import * as collabServer from './migrations/2026-11-26-40-c-collab-server.js';

// Listed here rather than read from disk so the same code runs from src (tsx) and from dist.
const migrations: Record<string, Migration> = {
  '2026-11-22-01-accounts': accounts,
  '2026-11-22-02-notes': notes,
  '2026-11-22-03-auth-events': authEvents,
  '2026-11-23-02-1-version-metadata': versionMetadata,
  '2026-11-23-03-1-trash': trash,
  '2026-11-23-03-2-search': search,
  '2026-11-23-03-3-search-one-index': searchOneIndex,
  '2026-11-23-01-1-session-generation': sessionGeneration,
  '2026-11-23-06-1-search-current': searchCurrent,
  '2026-11-23-06-2-search-entry-view': searchEntryView,
  '2026-11-24-19-a-export-order': exportOrder,
  '2026-11-24-26-f-maintenance-runs': maintenanceRuns,
  '2026-11-24-31-a-organise': organise,
  '2026-11-24-31-b-search-unarchived': searchUnarchived,
  '2026-11-25-32-a-second-factor': secondFactor,
  '2026-11-25-32-b-attachments': attachments,
  '2026-11-25-32-c-access-tokens': accessTokens,
  '2026-11-25-32-d-shares': shares,
  '2026-11-25-33-a-webdav': webdav,
  '2026-11-25-33-b-members': members,
  '2026-11-25-34-a-save-function': saveFunction,
  '2026-11-26-36-a-session-access-token': sessionAccessToken,
  '2026-11-26-37-f-folders-owner': foldersOwner,
  '2026-11-26-37-s-access-jti-index': accessJtiIndex,
  '2026-11-26-40-c-collab-server': collabServer,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export function createMigrator(db: Kysely<any>): Migrator {
  // Features landed in parallel with dated names that do not sort in landing order; each only adds
  // columns, tables or indexes of its own, so a database that has later ones may apply earlier ones.
  return new Migrator({ db, provider, allowUnorderedMigrations: true });
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await createMigrator(db).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined) {
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export const latestMigration = Object.keys(migrations).sort().at(-1);

/** Every migration this build knows (a database with others was written by a newer build). */
export const knownMigrations: readonly string[] = Object.keys(migrations);
