// Ops/s of several tasks measured together with tinybench: each call of a
// task does `batch` operations, each round runs every task, and the median
// of the rounds is kept (rounds interleave the tasks, so a slow moment of a
// shared machine falls on all of them).
import { Bench } from 'tinybench';
import { median } from './stats.js';

/**
 * @param {Record<string, () => void>} tasks
 * @param {{ rounds: number, timeMs: number, batch: number, progress?: (message: string) => void }} settings
 * @returns {Promise<{ rates: Record<string, number>, samples: Record<string, number[]> }>} median ops/s, and every round's
 */
export async function measureRates(tasks, { rounds, timeMs, batch, progress }) {
  const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    progress?.(`round ${round + 1}/${rounds}`);
    const bench = new Bench({ time: timeMs, warmupTime: Math.min(100, timeMs) });
    for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`bench task ${task.name} did not complete: ${task.result.state}`);
      samples[task.name].push((batch * 1000) / task.result.period);
    }
  }
  const rates = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, median(list)]));
  return { rates, samples };
}
