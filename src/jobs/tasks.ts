import type { Config } from '../config.js';
import type { MaintenanceTask } from './maintenance.js';

/**
 * Every periodic housekeeping task of the service, in the order a pass runs them. Each feature
 * contributes its own (history retention, trash purge, audit retention, dead refresh tokens).
 */
export function maintenanceTasks(_config: Config): MaintenanceTask[] {
  return [];
}
