// Where this Node's own headers are, so node-gyp builds without downloading
// them (machines without internet access, CI). Shared by install.js and
// prebuild.js.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The installation prefix holding include/node/node_api.h, or null (or when npm already names one). */
export function localNodeDir() {
  if (process.env.npm_config_nodedir) return null;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}
