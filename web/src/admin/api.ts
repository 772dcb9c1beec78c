import { api, unwrap, type User } from '../api/client';
import type { components } from '../api/schema';

export type { AuthEvent, User } from '../api/client';

/** One page of every account (the API answers null for an empty page: an empty list here). */
export async function listUsers(limit: number, offset: number, signal?: AbortSignal): Promise<User[]> {
  return unwrap(await api.GET('/api/auth/admin/all', { params: { query: { limit, offset } }, signal })) ?? [];
}

export async function listAuthEvents(limit: number, signal?: AbortSignal) {
  return unwrap(await api.GET('/api/auth/admin/events', { params: { query: { limit } }, signal }));
}

export async function deleteUser(id: string): Promise<void> {
  unwrap(await api.DELETE('/api/auth/admin/{id}', { params: { path: { id } } }));
}

/** Every second factor of an account (authenticator app, recovery codes, passkeys). */
export async function removeSecondFactors(id: string): Promise<void> {
  unwrap(await api.DELETE('/api/auth/admin/{id}/mfa', { params: { path: { id } } }));
}

export type AdminUser = components['schemas']['AdminUser'];
export type Invitation = components['schemas']['Invitation'];

/** One page of every account with what administrators see of it (e-mail, disabled, factors, storage). */
export async function listAdminUsers(limit: number, offset: number, signal?: AbortSignal): Promise<AdminUser[]> {
  return (unwrap(await api.GET('/api/auth/admin/all', { params: { query: { limit, offset } }, signal })) ??
    []) as AdminUser[];
}

/** Disable or enable, make or remove an administrator, or set the account's own storage quota. */
export async function updateUser(
  id: string,
  body: { is_admin?: boolean; disabled?: boolean; storage_quota_bytes?: number | null },
): Promise<AdminUser> {
  return unwrap(await api.PATCH('/api/auth/admin/{id}', { params: { path: { id } }, body }));
}

export async function createUser(body: { username: string; email?: string; admin?: boolean }) {
  return unwrap(await api.POST('/api/auth/admin/users', { body }));
}

/** A new set-up link for an account that has no password yet. */
export async function newSetupLink(id: string) {
  return unwrap(await api.POST('/api/auth/admin/{id}/setup-link', { params: { path: { id } } }));
}

export async function listInvitations(signal?: AbortSignal): Promise<Invitation[]> {
  return unwrap(await api.GET('/api/auth/admin/invitations', { signal }));
}

export async function createInvitation(body: { email?: string; admin?: boolean }) {
  return unwrap(await api.POST('/api/auth/admin/invitations', { body }));
}

export async function revokeInvitation(id: string): Promise<void> {
  unwrap(await api.DELETE('/api/auth/admin/invitations/{id}', { params: { path: { id } } }));
}

/**
 * One account as administrators see it (the row the list gives), or null when there is none: an
 * unknown id is 404, and an address whose id is not even a UUID (typed or cut short) is 400.
 */
export async function getAdminUser(id: string, signal?: AbortSignal): Promise<AdminUser | null> {
  const result = await api.GET('/api/auth/admin/{id}', { params: { path: { id } }, signal });
  const code = (result.error as { code?: unknown } | undefined)?.code;
  if (code === 'user_not_found' || code === 'resource_id_missing') return null;
  return unwrap(result);
}

/** A single-use 30-minute password reset link for the account, to hand over (nothing is mailed). */
export async function passwordResetLink(id: string) {
  return unwrap(await api.POST('/api/auth/admin/{id}/password-reset', { params: { path: { id } } }));
}
