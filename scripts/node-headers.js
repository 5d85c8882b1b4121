// Where the running Node's own headers are, so node-gyp builds without
// downloading them (machines without internet access, CI). Shared by
// install.js and prebuild.js.
//
// A nodedir configured for npm (npm_config_nodedir, e.g. nodedir=/usr in
// .npmrc) is used only when its headers are this Node's: building Node 22's
// addon against Node 20's headers gives a binary that does not load.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The Node version a header directory declares ("22.23.3"), or null. */
export function headerVersion(prefix) {
  try {
    const text = readFileSync(path.join(prefix, 'include', 'node', 'node_version.h'), 'utf8');
    const part = (name) => text.match(new RegExp(`#define ${name} (\\d+)`))?.[1];
    const [major, minor, patch] = [part('NODE_MAJOR_VERSION'), part('NODE_MINOR_VERSION'), part('NODE_PATCH_VERSION')];
    return major && minor && patch ? `${major}.${minor}.${patch}` : null;
  } catch {
    return null;
  }
}

/**
 * The installation prefix holding this Node's include/node headers: the
 * configured nodedir if it matches, else the prefix of the running binary
 * if it has them; null lets node-gyp fetch them.
 */
export function localNodeDir() {
  const configured = process.env.npm_config_nodedir;
  if (configured && headerVersion(configured) === process.versions.node) return configured;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) && headerVersion(prefix) === process.versions.node) {
    return prefix;
  }
  return null;
}
