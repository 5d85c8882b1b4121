// Packages only some features need (prom-client, ioredis) are optional peer
// dependencies: loaded on first use, with an error that says how to get them.
import { createRequire } from 'node:module';
import { ArenaCacheError } from './errors.js';

const require = createRequire(import.meta.url);

/** `name` loaded, or an ArenaCacheError `code` that says `feature` needs it. */
export function requireOptional(name, code, feature) {
  try {
    return require(name);
  } catch (cause) {
    throw new ArenaCacheError(code, `${feature} needs the ${name} package, which could not be loaded; install it with "npm install ${name}"`, { cause });
  }
}
