// npm run prebuild: builds the addon for this Node version into
// prebuilds/<platform>-<arch>/arenacache.abi<N>.node (prebuildify), which the
// loader (lib/native.js, through node-gyp-build) prefers to a local build.
//
// The addon uses one V8 API function (see src/native/external_shared_buffer.h),
// so a prebuild is tagged with the Node ABI and serves that Node major only:
// run this once per Node version you ship for.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localNodeDir } from './node-headers.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const nodeDir = localNodeDir();
if (nodeDir) process.env.npm_config_nodedir = nodeDir;

const prebuildify = require('prebuildify');
prebuildify({ cwd: root, targets: [{ runtime: 'node', target: process.versions.node }], strip: true }, (error) => {
  if (error) {
    console.error(`arenacache: prebuild failed: ${error.message}`);
    process.exit(1);
  }
  const folder = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  console.log(`arenacache: prebuilt ${readdirSync(folder).map((name) => path.join(folder, name)).join(', ')}`);
});
