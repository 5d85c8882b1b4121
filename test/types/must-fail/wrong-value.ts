// Must NOT compile (outside test/types/tsconfig.json's files): test/types.test.js checks that tsc reports the line below.
import { SharedCache } from 'arenacache';

const cache = new SharedCache<string, number>({ memoryBytes: 1 << 20 });
cache.set('k', 'not a number');
