/**
 * What an administrator is asked before the changes that lock someone out, the same from the
 * account list and from the account's own page (`name` quoted, `self` when it is their own).
 */
export function confirmDisable(name: string, self: boolean): boolean {
  const warning = self ? ' You will be signed out here too.' : '';
  return window.confirm(
    `Disable ${name}? Every session of it ends at once, its tokens stop working and it cannot log in until enabled.${warning}`,
  );
}

export function confirmRemoveAdmin(name: string, self: boolean): boolean {
  const warning = self ? ' You will no longer see Administration.' : '';
  return window.confirm(`Remove ${name} from the administrators?${warning}`);
}
