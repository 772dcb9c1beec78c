import { api, unwrap, type User } from '../api/client';

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
