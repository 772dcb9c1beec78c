import { pruneAuditEvents, pruneDeadRefreshTokens } from '../audit/retention.js';
import type { Config } from '../config.js';
import { pruneHistory } from '../notes/retention.js';
import { indexMissingVersions } from '../search/search.index.js';
import { purgeTrash } from '../trash/trash.service.js';
import type { MaintenanceTask } from './maintenance.js';

/**
 * Every periodic housekeeping task of the service, in the order a pass runs them. Each feature
 * contributes its own (history retention, trash purge, audit retention, dead refresh tokens).
 */
export const HISTORY_RETENTION_TASK = 'history-retention';

export function maintenanceTasks(config: Config): MaintenanceTask[] {
  return [
    { name: HISTORY_RETENTION_TASK, run: async (db, now) => ({ ...(await pruneHistory(db, now, config.historyRetention)) }) },
    { name: 'trash-purge', run: (db, now) => purgeTrash(db, now, config) },
    { name: 'search-index', run: (db) => indexMissingVersions(db) },
    { name: 'audit-retention', run: (db, now) => pruneAuditEvents(db, now, config) },
    { name: 'refresh-token-prune', run: (db, now) => pruneDeadRefreshTokens(db, now) },
  ];
}
