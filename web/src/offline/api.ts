/** Whether the service answers at all (its readiness probe): how the client notices the network is back. */
export async function serviceReady(): Promise<boolean> {
  return fetch('/readyz', { cache: 'no-store' }).then(
    (r) => r.ok,
    () => false,
  );
}
