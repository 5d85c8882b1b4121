// A process's share of a linearizability history on a file-backed cache (see
// history.js). argv[2] is JSON: { path, clockPath, ops, writer, parties,
// nearCache, form }; the clock file's first words are the shared clock and barrier.
import { SharedCache } from '../../lib/index.js';
import { fileMap, fileOpen, POPULATE_NONE } from '../../lib/native.js';
import { recordHistory } from './history.js';

const { path, clockPath, ops, writer, parties, nearCache, form } = JSON.parse(process.argv[2]);
const cache = SharedCache.open(path, { nearCache });
const shared = fileMap(fileOpen(clockPath, 0, 'history clock').fd, 4096, POPULATE_NONE);
const history = recordHistory(cache, ops, writer, new Int32Array(shared, 0, 1), new Int32Array(shared, 64, 2), parties, form);
process.send(history, () => process.disconnect());
