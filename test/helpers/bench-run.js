// Runs a benchmark script with tiny settings for the bench smoke tests:
// bench/<script> --json <temp>/<name>.json, with `env` over this process's
// environment. Returns its stdout, the parsed JSON and, where the script
// wrote one beside the JSON, its chart (svg); the temp directory is removed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function runBench(script, env) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bench-test-'));
  const name = path.basename(script, '.js');
  const json = path.join(dir, `${name}.json`);
  try {
    const output = execFileSync(process.execPath, [fileURLToPath(new URL(`../../bench/${script}`, import.meta.url)), '--json', json], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const chart = path.join(dir, `${name}.svg`);
    return { output, result: JSON.parse(readFileSync(json, 'utf8')), svg: existsSync(chart) ? readFileSync(chart, 'utf8') : null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
