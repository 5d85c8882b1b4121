// The demo's "expensive query": a real lmdb database of order records, and a
// report that aggregates a range of them (a few hundred microseconds to a
// millisecond of real reads and arithmetic, like a small SQL GROUP BY).

import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { open } from 'lmdb';
import { seededRandom } from '../../test/helpers/seeded-random.js';

export const RECORDS = 100_000;
export const RANGE = 600;
const READY_KEY = '__built__';

export function databasePath(dataDir) {
  return path.join(dataDir, 'orders.lmdb');
}

export function openDatabase(dataDir, { readOnly = true } = {}) {
  return open({ path: databasePath(dataDir), readOnly, compression: false });
}

function recordKey(i) {
  return `order:${String(i).padStart(6, '0')}`;
}

/** Builds the database on first run (about a second); later runs reuse it. */
export async function ensureDatabase(dataDir) {
  mkdirSync(dataDir, { recursive: true });
  if (existsSync(databasePath(dataDir))) {
    const db = openDatabase(dataDir);
    const ready = db.get(READY_KEY) === RECORDS;
    await db.close();
    if (ready) return false;
  }
  const db = openDatabase(dataDir, { readOnly: false });
  const random = seededRandom(2024);
  const regions = ['north', 'south', 'east', 'west'];
  await db.transaction(() => {
    for (let i = 0; i < RECORDS; i++) {
      db.put(recordKey(i), {
        id: i,
        customer: `customer-${Math.floor(random() * 5000)}`,
        region: regions[Math.floor(random() * regions.length)],
        quantity: 1 + Math.floor(random() * 20),
        price: Math.round(random() * 10_000) / 100,
      });
    }
    db.put(READY_KEY, RECORDS);
  });
  await db.close();
  return true;
}

/** The report for `reportId`: totals per region over RANGE consecutive orders. */
export function runReport(db, reportId) {
  const first = (reportId * 37) % (RECORDS - RANGE);
  const totals = {};
  let revenue = 0;
  let items = 0;
  for (const { value } of db.getRange({ start: recordKey(first), end: recordKey(first + RANGE) })) {
    const amount = value.quantity * value.price;
    revenue += amount;
    items += value.quantity;
    const region = (totals[value.region] ??= { orders: 0, revenue: 0 });
    region.orders++;
    region.revenue += amount;
  }
  return { reportId, firstOrder: first, orders: RANGE, items, revenue: Math.round(revenue * 100) / 100, totals };
}
