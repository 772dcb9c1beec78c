import { findUserByUsername } from '../accounts/user.repository.js';
import { isValidUsername, normalizeUsername } from '../accounts/username.js';
import { noteChanged } from '../db/effects.js';
import type { Db } from '../db/schema.js';
import { isForeignKeyViolation, isUniqueViolation, nowIso } from '../db/values.js';
import { Errors } from '../errors.js';
import { noteRole } from './access.repository.js';
import * as repo from './members.repository.js';
import type { Role } from './members.repository.js';

export type { Role } from './members.repository.js';

/** The roles a route can ask for, weakest first: a stronger role has every right of a weaker one. */
export type NeededRole = 'viewer' | 'editor' | 'owner';

/** At most this many people per note: every change is told to each of them (events). */
export const MEMBERS_MAX = 100;

export interface Member {
  user_id: string;
  username: string;
  role: Role;
  created_at: string;
}

const memberNotFound = Errors.memberNotFound;

/**
 * Who owns each note this instance has seen: a note's owner never changes (there is no transfer,
 * and ids are never reused), so an owner acting on their own note needs no look-up after the first.
 * Bounded; the oldest entries go first.
 */
export class OwnerCache {
  private readonly owners = new Map<string, string>();
  constructor(private readonly max = 50_000) {}
  get(noteId: string): string | undefined {
    return this.owners.get(noteId);
  }
  set(noteId: string, ownerId: string): void {
    if (this.owners.size >= this.max) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(noteId, ownerId);
  }
}

/**
 * Whose note the caller acts on, checked against the role a route needs (the `note` policy,
 * members/note-access.ts): the caller's own note, or a note shared with them with a role that is
 * enough (else 403 Forbidden). Anything else — missing, in the trash, a stranger's — is 404 `Note
 * not found`, alike. The caller's own note (known from `owners`) is settled without a look-up: every
 * query on it names its owner and skips the trash, so a missing or trashed one is still 404.
 */
export async function actingOwner(
  db: Db,
  owners: OwnerCache,
  userId: string,
  noteId: string,
  needed: NeededRole,
): Promise<string> {
  if (owners.get(noteId) === userId) return userId;
  const access = await noteRole(db, userId, noteId);
  if (access !== undefined) owners.set(noteId, access.ownerId);
  if (access === undefined || access.role === null) throw Errors.noteNotFound();
  if (access.role === 'owner') return userId;
  if (needed === 'owner' || (needed === 'editor' && access.role !== 'editor')) throw Errors.forbidden();
  return access.ownerId;
}

/** The owner's note outside the trash, or 404 (member routes read and write the members table alone). */
async function requireNote(db: Db, ownerId: string, noteId: string): Promise<void> {
  if (!(await repo.isOwnedNote(db, ownerId, noteId))) throw Errors.noteNotFound();
}

export async function listMembers(db: Db, ownerId: string, noteId: string): Promise<Member[]> {
  await requireNote(db, ownerId, noteId);
  return repo.listMembers(db, noteId);
}

export async function addMember(
  db: Db,
  ownerId: string,
  noteId: string,
  input: { username: string; role: Role },
): Promise<Member> {
  await requireNote(db, ownerId, noteId);
  // A name no account can have names no account (and never reaches the database: NUL and the like).
  const username = normalizeUsername(input.username);
  const user = isValidUsername(username) ? await findUserByUsername(db, username) : undefined;
  if (user === undefined) throw Errors.userNotFound();
  if (user.id === ownerId) throw Errors.memberIsOwner();
  if ((await repo.countMembers(db, noteId)) >= MEMBERS_MAX) throw Errors.membersLimit(MEMBERS_MAX);
  const member: Member = { user_id: user.id, username: user.username, role: input.role, created_at: nowIso() };
  try {
    await repo.insertMember(db, { note_id: noteId, user_id: user.id, role: input.role, created_at: member.created_at });
  } catch (error) {
    if (isUniqueViolation(error)) throw Errors.memberExists(user.username);
    if (isForeignKeyViolation(error)) throw Errors.noteNotFound(); // deleted meanwhile
    throw error;
  }
  noteChanged(db, { type: 'share.changed', noteId });
  return member;
}

export async function changeRole(db: Db, ownerId: string, noteId: string, userId: string, role: Role): Promise<Member> {
  await requireNote(db, ownerId, noteId);
  if (!(await repo.updateRole(db, noteId, userId, role))) throw memberNotFound();
  noteChanged(db, { type: 'share.changed', noteId });
  return (await repo.listMembers(db, noteId)).find((m) => m.user_id === userId) ?? Promise.reject(memberNotFound());
}

/** The owner removes a member, or a member leaves: anyone else is refused. */
export async function removeMember(
  db: Db,
  callerId: string,
  ownerId: string,
  noteId: string,
  userId: string,
): Promise<void> {
  await requireNote(db, ownerId, noteId);
  if (callerId !== ownerId && callerId !== userId) throw Errors.forbidden();
  if (!(await repo.deleteMember(db, noteId, userId))) throw memberNotFound();
  // The one who left is told too: their "Shared with me" changed.
  noteChanged(db, { type: 'share.changed', noteId, alsoTell: [userId] });
}
