import { pruneAuditEvents } from '../audit/retention.js';
import type { Config } from '../config.js';
import { pruneHistory } from '../notes/retention.js';
import { indexMissingVersions } from '../search/search.index.js';
import { pruneDeadRefreshTokens } from '../sessions/retention.js';
import { purgeTrash } from '../trash/trash.service.js';
import { deriveMissingTags, settleTags } from '../notes/tags-backfill.js';
import { deleteExpiredChallenges } from '../mfa/mfa.repository.js';
import { collectGarbage } from '../attachments/attachments.service.js';
import { createStorage } from '../attachments/create-storage.js';
import { pruneOrphanProperties } from '../dav/dav.repository.js';
import { deleteDeadLinks } from '../recovery/account-links.repository.js';
import type { Db } from '../db/schema.js';
import type { MaintenanceTask } from './maintenance.js';

/**
 * Every periodic housekeeping task of the service, in the order a pass runs them. Each feature
 * contributes its own (history retention, trash purge, audit retention, dead refresh tokens).
 */
export const HISTORY_RETENTION_TASK = 'history-retention';

export function maintenanceTasks(config: Config): MaintenanceTask[] {
  return [
    {
      name: HISTORY_RETENTION_TASK,
      run: async (db, now) => ({ ...(await pruneHistory(db, now, config.historyRetention)) }),
      describe: ({ versions = 0, notes = 0 }) =>
        config.historyRetention === null
          ? 'HISTORY_RETENTION is off; every version kept'
          : `deleted ${versions} old ${plural(versions, 'version')} of ${notes} ${plural(notes, 'note')}`,
    },
    {
      name: 'trash-purge',
      run: (db, now) => purgeTrash(db, now, config),
      describe: ({ notes = 0 }) => `purged ${notes} ${plural(notes, 'note')} deleted over ${config.trashDays} days ago`,
    },
    {
      name: 'search-index',
      backfill: true,
      run: (db) => indexMissingVersions(db),
      describe: ({ versions = 0 }) =>
        versions === 0
          ? 'search index complete'
          : `indexed ${versions} ${plural(versions, 'version')} the search index lacked`,
    },
    {
      name: 'tags-backfill',
      backfill: true,
      // Hourly too: replicas of an older release may still write after the catch-up's window.
      run: tagsBackfill,
      // During a rolling upgrade the previous release's replicas create notes without tags, save
      // versions without deriving theirs, and trash and restore notes without their tag rows.
      catchUp: tagsBackfill,
      describe: ({ notes = 0, settled = 0, checked = 0 }) => {
        const parts = [
          ...(notes === 0 ? [] : [`derived the tags of ${notes} ${plural(notes, 'note')} written before tags existed`]),
          ...(settled === 0
            ? []
            : [
                `settled the tags of ${settled} ${plural(settled, 'note')} that older replicas wrote, trashed or restored without them`,
              ]),
          ...(checked === 0 ? [] : [`checked the tags of ${checked} ${plural(checked, 'note')}: right`]),
        ];
        return parts.length === 0 ? "every note's tags derived" : parts.join('; ');
      },
    },
    {
      name: 'audit-retention',
      run: (db, now) => pruneAuditEvents(db, now, config),
      describe: ({ events = 0 }) =>
        `deleted ${events} auth ${plural(events, 'event')} older than ${config.auditRetentionDays} days`,
    },
    {
      name: 'refresh-token-prune',
      run: (db, now) => pruneDeadRefreshTokens(db, now),
      describe: ({ tokens = 0 }) => `deleted ${tokens} expired or revoked refresh ${plural(tokens, 'token')}`,
    },
    {
      name: 'passkey-challenges',
      run: async (db, now) => ({ challenges: await deleteExpiredChallenges(db, now.toISOString()) }),
      describe: ({ challenges = 0 }) => `deleted ${challenges} expired passkey ${plural(challenges, 'challenge')}`,
    },
    {
      name: 'account-links',
      run: async (db, now) => ({ links: await deleteDeadLinks(db, now.toISOString()) }),
      describe: ({ links = 0 }) =>
        `deleted ${links} used or expired password-reset and e-mail ${plural(links, 'link')}`,
    },
    {
      name: 'attachments-gc',
      run: (db, now) => collectGarbage(db, createStorage(config, db), now),
      describe: ({ attachments = 0, blobs = 0, failures = 0 }) =>
        `deleted ${attachments} ${plural(attachments, 'attachment')} no version linked to ` +
        `within 24 hours and ${blobs} stored ${plural(blobs, 'file')} nothing uses${failures > 0 ? `; ${failures} could not be removed from the store` : ''}`,
    },
    {
      name: 'dav-properties',
      run: async (db) => ({ properties: await pruneOrphanProperties(db) }),
      describe: ({ properties = 0 }) =>
        `deleted ${properties} WebDAV ${plural(properties, 'property', 'properties')} of notes, folders and files deleted outside WebDAV`,
    },
  ];
}

async function tagsBackfill(db: Db): Promise<{ notes: number; settled: number; checked: number }> {
  const { notes } = await deriveMissingTags(db);
  const { notes: settled, checked } = await settleTags(db);
  return { notes, settled, checked };
}

function plural(n: number, word: string, many = `${word}s`): string {
  return n === 1 ? word : many;
}
