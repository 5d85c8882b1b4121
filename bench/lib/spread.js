// How far a same-run ratio moved between rounds, and whether a run was too
// noisy to trust: every benchmark that reports ratios says so the same way.
import os from 'node:os';

/** Above this max/min of any ratio over the rounds, the run is called too noisy. */
export const NOISY_SPREAD = 1.25;

/** Each round's a/b, for two contenders measured in the same rounds. */
export function roundRatios(a, b) {
  return a.map((value, round) => value / b[round]);
}

/** The median of a ratio's rounds, with their range when there were several: "0.52 (0.48-0.61)". */
export function ratioText(ratios) {
  const finite = ratios.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return 'n/a';
  const sorted = finite.sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)].toFixed(2);
  return sorted.length === 1 ? middle : `${middle} (${sorted[0].toFixed(2)}-${sorted[sorted.length - 1].toFixed(2)})`;
}

/**
 * Tracks the spread of every ratio a benchmark prints; report() says how far
 * they moved and warns when the machine was too noisy.
 */
export class SpreadTracker {
  worst = 1;

  /** Notes the rounds of one ratio, and returns its text for a table cell. */
  ratio(ratios) {
    const finite = ratios.filter((value) => Number.isFinite(value) && value > 0);
    if (finite.length > 1) this.worst = Math.max(this.worst, Math.max(...finite) / Math.min(...finite));
    return ratioText(ratios);
  }

  /**
   * The closing lines: how far ratios moved, and a warning above NOISY_SPREAD.
   * @param {number} count how many rounds (or runs) each ratio had
   * @param {string} advice what to run with instead, e.g. "more BENCH_ROUNDS"
   * @param {string} [unit] what the repetitions are called: "rounds" or "runs"
   */
  report(count, advice, unit = 'rounds') {
    if (count === 1) {
      console.log(`One ${unit.replace(/s$/, '')} only: there is no spread to show; 3 or more ${unit} tell a real difference from noise.`);
      return;
    }
    console.log(`Ratios moved up to ${this.worst.toFixed(2)}x between the ${count} ${unit}.`);
    if (this.worst > NOISY_SPREAD) {
      console.log(
        `WARNING: this machine was too noisy for these figures to mean much (a ratio moved ${this.worst.toFixed(2)}x between ${unit}; ` +
          `load average ${os.loadavg()[0].toFixed(2)} now). Run again on a quiet machine, or with ${advice}.`,
      );
    }
  }
}
