// A workspace's history as a plain-text table (history({ format: 'table' })).

import { formatBytes, formatTable } from '../text-table.js';

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
