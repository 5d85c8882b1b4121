// arenacache/snapshot: workspace snapshots on the native clone engine.
export { Workspace, defaults } from './workspace.js';
export { cloneTree } from './clone-tree.js';
export { ArenaCacheError, codes } from '../errors.js';
