import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The longest the event loop (the server runs in the test's process) was held while `work` ran,
 * and the slowest /healthz answer meanwhile, polled every 10 ms: a pause between two polls shows
 * in the first, one that delays an answer in the second.
 */
export async function longestPauseDuring<T>(url: string, work: () => Promise<T>): Promise<{ result: T; pauseMs: number; polls: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let done = false;
  const finished = work().finally(() => { done = true; });
  let slowestMs = 0;
  let polls = 0;
  try {
    while (!done) {
      const began = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.text();
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      slowestMs = Math.max(slowestMs, performance.now() - began);
      polls++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { result: await finished, pauseMs: Math.max(slowestMs, delay.max / 1e6), polls };
  } finally {
    delay.disable();
  }
}
