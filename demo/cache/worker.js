// Piscina task: serves a batch of report requests. Each request looks in the
// cache of this run's mode and runs the lmdb query only on a miss (with the
// shared cache, through fetch(): one query per report even when several
// workers miss it at the same moment).
import { LRUCache } from 'lru-cache';
import { workerData } from 'piscina';
import { SharedCache } from '../../lib/index.js';
import { openDatabase, runReport } from './database.js';

const { mode, dataDir, handle, perWorkerEntries } = workerData;
const db = openDatabase(dataDir);
let cache = null;
if (mode === 'lru') cache = new LRUCache({ max: perWorkerEntries });
if (mode === 'shared') cache = SharedCache.attach(handle);

export default async function serve(reportIds) {
  let queries = 0;
  let hits = 0;
  for (const id of reportIds) {
    const key = `report:${id}`;
    let report;
    if (mode === 'shared') {
      // Single flight: when several workers miss the same report at once,
      // one of them queries and the others wait for its result.
      let loaded = false;
      report = await cache.fetch(key, () => {
        loaded = true;
        queries++;
        return runReport(db, id);
      });
      if (!loaded) hits++;
    } else {
      report = cache?.get(key);
      if (report === undefined) {
        report = runReport(db, id);
        queries++;
        cache?.set(key, report);
      } else {
        hits++;
      }
    }
    if (report.reportId !== id) throw new Error(`wrong report for ${key}`);
  }
  return { queries, hits };
}
