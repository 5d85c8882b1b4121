// ESLint flat config. Run with `npm run lint` (which also checks the C++
// formatting) or `npx eslint .`.
//
// Every .js file here is an ES module ("type": "module") run by Node: the
// library, the CLI, benchmarks, tests, scripts, the demo and the examples.
// Worker threads (bench/workers, demo/cache/worker.js, examples/piscina-pool)
// are Node workers too, with the same globals; nothing runs in a browser.
import js from '@eslint/js';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { layerZones } from './scripts/layers.js';

export default [
  {
    ignores: [
      'node_modules/',
      'build/',
      'prebuilds/',
      // TypeScript declarations and type tests: checked by tsc, not ESLint.
      'types/',
      'test/types/',
      // Benchmark output (JSON, SVG), not code.
      'bench/results/',
    ],
  },
  {
    linterOptions: {
      // A disable comment that no longer suppresses anything should go, not
      // linger and hide a future finding: fail on it rather than warn.
      reportUnusedDisableDirectives: 'error',
    },
  },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: { ...globals.node },
    },
    rules: {
      // `const { dropped: _, ...rest } = object` is how the code leaves out a
      // property (a checksum field before hashing, NODE_TEST_CONTEXT from a
      // child's environment): the named sibling is unused on purpose.
      'no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // The layer rule of docs/architecture.md: each folder of lib/ imports
    // only the folders below it (scripts/layers.js lists them), and no
    // module imports itself through others.
    files: ['lib/**/*.js'],
    plugins: { 'import-x': importX },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones() }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
];
