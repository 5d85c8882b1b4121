// Summaries of repeated benchmark rounds.

/** The median of a list of numbers (the upper one of an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
