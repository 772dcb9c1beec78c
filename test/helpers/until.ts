/**
 * Polls `condition` until it holds (its truthy value is returned) or `timeoutMs` passes (then
 * throws, naming `what`): a deadline for conditions that no event announces, never a bare sleep.
 */
export async function until<T>(
  condition: () => T | Promise<T>,
  what: string,
  { timeoutMs = 10_000, everyMs = 10 } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
