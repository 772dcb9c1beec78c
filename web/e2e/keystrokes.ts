import type { Page } from '@playwright/test';

// Shared by reading.spec.ts (the 1 MB note's budget) and collab-bench.spec.ts (the same with live editing on).

/**
 * Keystroke latency from the browser's Event Timing API: for each key, the time from the key
 * press until the frame that shows its effect. Entries under 16 ms are not reported at all, which
 * is well within budget; they count as 0.
 */
export async function keystrokeDurations(page: Page, type: () => Promise<void>, keys: number): Promise<number[]> {
  await page.evaluate(() => {
    const w = window as unknown as { keyTimes: number[] };
    w.keyTimes = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.name === 'keydown') w.keyTimes.push(entry.duration);
    }).observe({ type: 'event', durationThreshold: 16 } as PerformanceObserverInit);
  });
  await type();
  // Entries are delivered after the frame they end in.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 100))));
  const slow = await page.evaluate(() => (window as unknown as { keyTimes: number[] }).keyTimes);
  return [...slow, ...Array<number>(Math.max(0, keys - slow.length)).fill(0)].sort((a, b) => a - b);
}
