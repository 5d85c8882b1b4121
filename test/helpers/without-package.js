// Runs `script` (an ES module body that gets the library as `lib` and the
// copy's lib/ folder as the URL string `libUrl`, and prints one JSON line)
// against a copy of lib/ whose node_modules lacks `name`: how an optional
// peer dependency that is not installed is reported.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function runWithout(name, script) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const copy = mkdtempSync(path.join(os.tmpdir(), `arenacache-without-${name}-`));
  try {
    cpSync(path.join(root, 'lib'), path.join(copy, 'lib'), { recursive: true });
    cpSync(path.join(root, 'package.json'), path.join(copy, 'package.json'));
    mkdirSync(path.join(copy, 'node_modules'));
    for (const entry of readdirSync(path.join(root, 'node_modules'))) {
      if (entry !== name && !entry.startsWith('.')) symlinkSync(path.join(root, 'node_modules', entry), path.join(copy, 'node_modules', entry));
    }
    const module = `import * as lib from ${JSON.stringify(`file://${copy}/lib/index.js`)};\nconst libUrl = ${JSON.stringify(`file://${copy}/lib/`)};\n${script}`;
    return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', module], { encoding: 'utf8' }));
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
