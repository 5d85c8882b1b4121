// Packages only some features need (prom-client, ioredis, keyv) are optional
// peer dependencies: loaded on first use, with an error that says how to get
// them.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ArenaCacheError } from './errors.js';

const require = createRequire(import.meta.url);

/**
 * `name` loaded, or an ArenaCacheError `code` that says `feature` needs it.
 *
 * The package is resolved as an `import` of it would be, then loaded
 * synchronously (require() of an ES module, which every Node release in
 * package.json's engines has): a package with both an ES module and a
 * CommonJS build gives the same module the user's own `import` gets, so its
 * classes are the user's (no dual-package hazard), and the call that needs
 * it stays synchronous. A top-level await would break require() of ours.
 */
export function requireOptional(name, code, feature) {
  try {
    return require(fileURLToPath(import.meta.resolve(name)));
  } catch (cause) {
    throw new ArenaCacheError(code, `${feature} needs the ${name} package, which could not be loaded; install it with "npm install ${name}"`, { cause });
  }
}
