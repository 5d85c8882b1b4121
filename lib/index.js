// The public entry of arenacache: the classes users construct, the error
// they catch and the names of the diagnostics channels they subscribe to.
// Everything else is internal.
export { SharedCache } from './cache/shared-cache.js';
export { BlockStore } from './arena/blocks/block-store.js';
export { ArenaCacheError, codes } from './errors.js';
export { InvalidationBus } from './invalidation/bus.js';
export { channels } from './cache/diagnostics.js';
