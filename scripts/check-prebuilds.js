// npm's prepack hook (so `npm pack` and `npm publish` run it): refuses to
// pack a package that lacks any prebuilt binary of scripts/node-targets.json
// (every Node major on every CPU), or carries one that does not look
// loadable or is older than the C++ sources, naming each and how to build
// them. Without this, a pack from a checkout ships no binaries and every
// user needs a compiler.
//
// ARENACACHE_PACK_WITHOUT_PREBUILDS=1 packs anyway, saying what is missing:
// for development packs (npm run lint's attw --pack, a tarball to try an
// install with), never for a release. `npm run release` builds the set,
// packs and checks the tarball.
import { checkPrebuildDir, expectedPrebuilds } from './prebuild-set.js';

const problems = checkPrebuildDir();
if (problems.length === 0) process.exit(0);

const total = expectedPrebuilds().length;
if (process.env.ARENACACHE_PACK_WITHOUT_PREBUILDS === '1') {
  process.stderr.write(
    `arenacache: ARENACACHE_PACK_WITHOUT_PREBUILDS=1: packing without ${problems.length} of ${total} prebuilt binaries (not a release):\n` +
      problems.map((line) => `  ${line}\n`).join(''),
  );
  process.exit(0);
}
process.stderr.write(
  `arenacache: refusing to pack: a release carries a prebuilt binary for every Node major and CPU in scripts/node-targets.json, and ${problems.length} of ${total} are not in order:\n` +
    problems.map((line) => `  ${line}\n`).join('') +
    '  Build them and pack with: npm run release (prebuilds for every target, the tarball in dist/, checked)\n' +
    '  or build them only with:  npm run prebuilds -- --all (arm64 needs g++-aarch64-linux-gnu)\n' +
    '  For a development pack without them: ARENACACHE_PACK_WITHOUT_PREBUILDS=1 npm pack\n',
);
process.exit(1);
