// Plain-text tables and sizes for people (the CLI, history({ format: 'table' })).

export function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Columns padded to their widest cell; `rows` are arrays of strings, `headers` their titles. */
export function formatTable(headers, rows) {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => String(row[column]).length)));
  const line = (cells) =>
    cells
      .map((cell, column) => String(cell).padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function historyTable(rows) {
  return formatTable(
    ['', 'ID', 'TIME', 'FILES', 'SIZE', 'ENGINE', 'TAGS', 'PIN', 'MESSAGE'],
    rows.map((row) =>
      row.corrupt
        ? ['', row.id, '', '', '', '', '', '', `(corrupt: ${row.error})`]
        : [
            row.heads.length > 0 ? '*' : '',
            row.id,
            row.time.slice(0, 19).replace('T', ' '),
            String(row.files),
            formatBytes(row.bytes),
            row.engine + (row.degraded ? ' (degraded)' : ''),
            row.tags.join(','),
            row.pin === null ? '' : row.pin.until === null ? 'pinned' : `until ${row.pin.until.slice(0, 10)}`,
            row.message.length > 50 ? `${row.message.slice(0, 49)}…` : row.message,
          ],
    ),
  );
}
