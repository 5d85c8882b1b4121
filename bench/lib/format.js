// Table formatting for benchmark output.

export function formatRate(opsPerSecond) {
  if (opsPerSecond >= 1e6) return `${(opsPerSecond / 1e6).toFixed(2)}M`;
  if (opsPerSecond >= 1e3) return `${(opsPerSecond / 1e3).toFixed(1)}k`;
  return opsPerSecond.toFixed(0);
}

export function printTable(rows) {
  const columns = Object.keys(rows[0]);
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => String(row[column]).length)));
  const line = (cells) => cells.map((cell, i) => String(cell).padEnd(widths[i])).join('  ');
  console.log(line(columns));
  console.log(line(widths.map((width) => '-'.repeat(width))));
  for (const row of rows) console.log(line(columns.map((column) => row[column])));
}

export function ratio(a, b) {
  return b > 0 ? (a / b).toFixed(2) : 'n/a';
}
