// Runs a benchmark script with tiny settings for the bench smoke tests:
// bench/<script> --json <temp>/<name>.json, with `env` over this process's
// environment. Returns its stdout, the parsed JSON, where the script wrote
// one beside the JSON its chart (svg), and with { stderr: true } its stderr
// (otherwise ignored); the temp directory is removed. assertBenchRejects
// checks the errors a script gives for bad settings.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function runBench(script, env, { stderr = false } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bench-test-'));
  const name = path.basename(script, '.js');
  const json = path.join(dir, `${name}.json`);
  try {
    const args = [fileURLToPath(new URL(`../../bench/${script}`, import.meta.url)), '--json', json];
    const options = { env: { ...process.env, ...env }, encoding: 'utf8' };
    let output;
    let errors = null;
    if (stderr) {
      // Only when asked: a bench that leaves a child holding a piped stderr would keep spawnSync waiting.
      const run = spawnSync(process.execPath, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 2 ** 20 });
      if (run.status !== 0) throw new Error(`bench/${script} exited with ${run.signal ?? `code ${run.status}`}:\n${run.stderr}`);
      output = run.stdout;
      errors = run.stderr;
    } else {
      output = execFileSync(process.execPath, args, { ...options, stdio: ['ignore', 'pipe', 'ignore'] });
    }
    const chart = path.join(dir, `${name}.svg`);
    return { output, stderr: errors, result: JSON.parse(readFileSync(json, 'utf8')), svg: existsSync(chart) ? readFileSync(chart, 'utf8') : null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Asserts that bench/<script> exits non-zero with `RangeError: <message>` on
 * stderr for each [variable, value, message] of `cases`.
 */
export function assertBenchRejects(script, cases) {
  const file = fileURLToPath(new URL(`../../bench/${script}`, import.meta.url));
  for (const [name, value, message] of cases) {
    assert.throws(
      () => execFileSync(process.execPath, [file], { env: { ...process.env, [name]: value }, encoding: 'utf8', stdio: 'pipe' }),
      (error) => {
        assert.notEqual(error.status, 0);
        assert.ok(error.stderr.includes(`RangeError: ${message}`), error.stderr);
        return true;
      },
    );
  }
}
