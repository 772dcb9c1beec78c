import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

/**
 * Copies the WAL into the database file on its own connection and thread (sqlite.ts): PASSIVE
 * checkpoints neither wait for nor block the app's writers and readers, and their fsync happens
 * here instead of inside whichever commit crossed the auto-checkpoint threshold on the event loop.
 */
const { filename, intervalMs } = workerData as { filename: string; intervalMs: number };
const db = new BetterSqlite3(filename);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked this time: the next tick tries again.
  }
}, intervalMs);
parentPort!.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
