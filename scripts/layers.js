// The layers of lib/, lowest first, and what each may import: the rule
// docs/architecture.md describes, in the form eslint.config.js enforces
// (import-x/no-restricted-paths zones). A folder imports the neutral
// helpers at the top of lib/ and the layers listed for it, nothing else;
// lib/index.js and the other package entry points may import anything.

/** Neutral helpers at the top of lib/: they import only each other. */
export const HELPERS = ['errors.js', 'validate.js', 'internal-symbols.js', 'typed-array.js', 'file-mode.js', 'text-table.js', 'optional-require.js'];

/** Each folder of lib/ and the folders it may import from (besides the helpers). */
export const LAYERS = Object.freeze({
  native: [],
  'arena/common': ['native'],
  'arena/entries': ['arena/common', 'native'],
  'arena/blocks': ['arena/common', 'native'],
  cache: ['arena/entries', 'arena/common', 'native'],
  'fs-compat': ['native'],
  fs: ['cache', 'arena/blocks', 'fs-compat', 'native'],
  'inode-fs': ['cache', 'fs-compat', 'native'],
  invalidation: ['cache', 'native'],
  keyv: ['cache'],
  'rate-limit': ['cache'],
  redis: ['cache'],
  snapshot: ['fs-compat', 'native'],
  cli: ['cache', 'snapshot', 'native'],
});

/** The zones of import-x/no-restricted-paths that say the same. */
export function layerZones() {
  const folders = Object.keys(LAYERS);
  const zones = folders.map((folder) => {
    const allowed = new Set([folder, ...LAYERS[folder]]);
    // A folder's own subfolders are separate layers (arena/common is not arena/entries).
    const from = folders.filter((other) => !allowed.has(other)).map((other) => `./lib/${other}`);
    return {
      target: `./lib/${folder}`,
      from,
      message: `lib/${folder} may import only ${[...allowed].map((name) => `lib/${name}`).join(', ')} and the helpers at the top of lib/ (docs/architecture.md)`,
    };
  });
  zones.push({
    target: HELPERS.map((name) => `./lib/${name}`),
    from: folders.map((other) => `./lib/${other}`),
    message: 'the helpers at the top of lib/ import only each other (docs/architecture.md)',
  });
  return zones;
}
