import type { HistoryRetention, RetentionTierName } from '../config.js';
import type { Db } from '../db/schema.js';
import * as repo from './retention.repository.js';

export interface RetentionCandidate {
  id: string;
  version: number;
  created_at: string;
  label: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** A bucket (hour, day, ISO week, month) never spans more than this. */
const LONGEST_BUCKET_MS = 31 * DAY_MS;

/** The UTC bucket a time falls in, as a key that is equal for every time of that bucket. */
function bucket(tier: RetentionTierName, iso: string): string {
  switch (tier) {
    case 'hourly':
      return iso.slice(0, 13);
    case 'daily':
      return iso.slice(0, 10);
    case 'monthly':
      return iso.slice(0, 7);
    case 'weekly': {
      // ISO weeks start on Monday: the key is that Monday's date.
      const day = new Date(`${iso.slice(0, 10)}T00:00:00.000Z`);
      const sinceMonday = (day.getUTCDay() + 6) % 7;
      return new Date(day.getTime() - sinceMonday * DAY_MS).toISOString().slice(0, 10);
    }
  }
}

/**
 * Which versions of one note the policy deletes: pure, so each rule is tested on its own. A version
 * is kept when it is the current one, has a label, is younger than `all`, or is the newest version
 * of its hour / day / ISO week / month while it is younger than that tier's duration. `versions`
 * must hold every version of the note created in the window the caller read (see pruneHistory),
 * so that "newest of its bucket" is judged against all of them.
 */
export function planPrune(
  versions: readonly RetentionCandidate[],
  current: number,
  now: Date,
  policy: HistoryRetention,
): RetentionCandidate[] {
  const nowMs = now.getTime();
  const newestFirst = [...versions].sort((a, b) => b.version - a.version);
  const keep = new Set<number>();
  for (const tier of policy.tiers) {
    const seen = new Set<string>();
    for (const v of newestFirst) {
      const key = bucket(tier.name, v.created_at);
      if (seen.has(key)) continue;
      seen.add(key);
      if (nowMs - Date.parse(v.created_at) < tier.ms) keep.add(v.version);
    }
  }
  return newestFirst.filter(
    (v) =>
      v.version !== current &&
      v.label === null &&
      !(nowMs - Date.parse(v.created_at) < policy.allMs) &&
      !keep.has(v.version),
  );
}

/** Notes examined per round. */
const NOTE_BATCH = 100;

export interface PruneSummary {
  notes: number;
  versions: number;
}

/**
 * Applies the policy to every note's history at time `now`; returns how many versions (of how many
 * notes) it deleted. One short transaction per note keeps SQLite's writer lock brief. The delete
 * re-checks that a version is unlabelled and not current (a label or a save may land meanwhile),
 * and each instance counts only the rows it deleted itself, so two instances pruning at once delete
 * each version once. `onPruned` hears each note's deleted version numbers (for the CLI).
 */
export async function pruneHistory(
  db: Db,
  now: Date,
  policy: HistoryRetention | null,
  onPruned?: (noteId: string, versions: number[]) => void,
): Promise<PruneSummary> {
  const summary: PruneSummary = { notes: 0, versions: 0 };
  if (policy === null || policy.allMs === Infinity) return summary;
  const cutoff = now.getTime() - policy.allMs;
  // Only versions older than `all` may go; the newest of a bucket that straddles the cutoff lies
  // at most one bucket later, so reading that far is enough to judge every candidate.
  const window = new Date(Math.min(cutoff + LONGEST_BUCKET_MS, now.getTime() + LONGEST_BUCKET_MS)).toISOString();
  const oldest = new Date(cutoff).toISOString();
  let after: string | undefined;
  for (;;) {
    const notes = await repo.notesWithOldVersions(db, after, oldest, NOTE_BATCH);
    for (const note of notes) {
      const versions = await repo.versionsBefore(db, note.id, window);
      const doomed = planPrune(versions, note.version, now, policy);
      if (doomed.length === 0) continue;
      const deleted = await db.transaction().execute((trx) =>
        repo.deleteVersions(
          trx,
          note.id,
          doomed.map((v) => v.id),
        ),
      );
      if (deleted.length === 0) continue;
      summary.notes += 1;
      summary.versions += deleted.length;
      onPruned?.(
        note.id,
        deleted.sort((a, b) => a - b),
      );
    }
    if (notes.length < NOTE_BATCH) break;
    after = notes.at(-1)!.id;
  }
  if (summary.versions > 0) await repo.reclaimPrunedVersions(db);
  return summary;
}

/** Version numbers as ranges for people to read: [2, 3, 4, 7] is "2-4, 7". */
export function versionRanges(sorted: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j += 1;
    parts.push(j === i ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}
