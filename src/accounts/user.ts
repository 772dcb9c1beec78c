import type { UserRow } from './user.repository.js';

/** An account as the API shows it: never the password hash or the session generation. */
export interface User {
  id: string;
  username: string;
  is_admin: boolean;
  /** A verified e-mail address, or null. */
  email: string | null;
  created_at: string;
  updated_at: string;
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    is_admin: row.is_admin,
    email: row.email ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
