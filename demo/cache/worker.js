// Piscina task: serves a batch of report requests. Each request looks in the
// cache of this run's mode and runs the lmdb query only on a miss.
import { LRUCache } from 'lru-cache';
import { workerData } from 'piscina';
import { SharedCache } from '../../lib/index.js';
import { openDatabase, runReport } from './database.js';

const { mode, dataDir, handle, perWorkerEntries } = workerData;
const db = openDatabase(dataDir);
let cache = null;
if (mode === 'lru') cache = new LRUCache({ max: perWorkerEntries });
if (mode === 'shared') cache = SharedCache.attach(handle);

export default function serve(reportIds) {
  let queries = 0;
  let hits = 0;
  for (const id of reportIds) {
    const key = `report:${id}`;
    let report = cache?.get(key);
    if (report === undefined) {
      report = runReport(db, id);
      queries++;
      cache?.set(key, report);
    } else {
      hits++;
    }
    if (report.reportId !== id) throw new Error(`wrong report for ${key}`);
  }
  return { queries, hits };
}
