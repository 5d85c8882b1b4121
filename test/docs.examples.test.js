// Every JavaScript example in the documentation (README.md, CONTRIBUTING.md,
// docs/*.md) runs as a reader would run it: a complete ES module program,
// saved as example.mjs in a fresh directory whose node_modules/arenacache is
// the checkout, run with node there. A test per block, named <file>:<line>;
// it passes when the program exits 0 within 30 s.
//
// A comment on the line right before a block's fence changes how it runs:
//   <!-- example needs: redis -->          a redis-server on loopback, its URL in REDIS_URL
//   <!-- example needs: examples/x/y.js --> that repository file copied next to example.mjs
//                                          (for a block that imports './y.js', as a reader who copied it would)
//   <!-- example: not run (reason) -->     shown, not run (kept to a handful, each with its reason)
// TypeScript blocks are type-checked under `strict` against the package's
// declarations; other languages (sh, text, json) are not run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, it, test } from 'node:test';
import { documentationFiles, fencedBlocks, readDocumentation, REPO_ROOT, withoutCodeBlocks } from './helpers/markdown.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';

const TIMEOUT_MS = 30_000;
const CONCURRENCY = 2;
const MAX_NOT_RUN = 5;
const SERVICES = new Set(['redis']);

const blocks = documentationFiles().flatMap((file) => fencedBlocks(readDocumentation(file)).map((block) => ({ ...block, file, name: `${file}:${block.line}` })));

/** How the marker comment before a block asks it to run: { needs: [...] }, { notRun: reason }, or a problem to report. */
function marker(block) {
  const comment = /^<!--\s*example\b(.*?)-->$/.exec(block.before);
  if (!comment) return { needs: [], files: [] };
  const needs = /^\s*needs:\s*(.+?)\s*$/.exec(comment[1]);
  if (needs) {
    const items = needs[1].split(/[\s,]+/);
    const files = items.filter((item) => item.includes('/'));
    const services = items.filter((item) => !item.includes('/'));
    const unknown = services.filter((service) => !SERVICES.has(service));
    if (unknown.length > 0) return { problem: `needs an unknown service: ${unknown.join(', ')} (known: ${[...SERVICES].join(', ')}; a repository file is a path with a /)` };
    const missing = files.filter((file) => !existsSync(path.join(REPO_ROOT, file)));
    if (missing.length > 0) return { problem: `needs repository files that do not exist: ${missing.join(', ')}` };
    return { needs: services, files };
  }
  const notRun = /^\s*:\s*not run\s*(?:\((.*)\))?\s*$/.exec(comment[1]);
  if (notRun) return notRun[1]?.trim() ? { notRun: notRun[1].trim() } : { problem: 'is marked "not run" without a reason: write <!-- example: not run (why) -->' };
  return { problem: `has an unrecognized marker ${block.before}: use <!-- example needs: redis --> or <!-- example: not run (why) -->` };
}

const isJavaScript = (block) => block.lang === 'js' || block.lang === 'javascript';
const isTypeScript = (block) => block.lang === 'ts' || block.lang === 'typescript';
const jsBlocks = blocks.filter(isJavaScript).map((block) => ({ ...block, marker: marker(block) }));

/** The packages a program imports by bare name, other than arenacache and Node's builtins: e.g. 'keyv', '@keyv/redis'. */
function bareImports(code) {
  const names = new Set();
  for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"./][^'"]*)['"]/g)) {
    const specifier = match[1];
    if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
    if (name !== 'arenacache') names.add(name);
  }
  return [...names];
}

/**
 * A fresh directory with node_modules/arenacache linking the checkout, so the
 * package and its subpaths resolve through package.json "exports", and links
 * to the checkout's copies of the other packages `code` imports (keyv,
 * prom-client, ...), which a reader would have installed.
 */
function projectDirectory(code, extraPackages = []) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ac-doc-'));
  // An ES module project, as the examples are: a copied file.js is a module too.
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const modules = path.join(dir, 'node_modules');
  mkdirSync(modules);
  symlinkSync(REPO_ROOT, path.join(modules, 'arenacache'), 'dir');
  for (const name of [...bareImports(code), ...extraPackages]) {
    const installed = path.join(REPO_ROOT, 'node_modules', name);
    if (!existsSync(installed)) continue;
    mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    symlinkSync(installed, path.join(modules, name), 'dir');
  }
  return dir;
}

/** Runs `file` with node in `cwd`; resolves once it exited 0, else rejects with its output. */
function runNode(args, { cwd, env = {} }) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd, env: { ...process.env, ...env }, timeout: TIMEOUT_MS, killSignal: 'SIGKILL', encoding: 'utf8', maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error) {
        const why = error.killed ? `was killed after ${TIMEOUT_MS / 1000} s` : `exited with ${error.code ?? error.signal}`;
        reject(new Error(`${why}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

async function runBlock(block) {
  const files = block.marker.files.map((file) => ({ name: path.basename(file), code: readFileSync(path.join(REPO_ROOT, file), 'utf8') }));
  const dir = projectDirectory([block.code, ...files.map((file) => file.code)].join('\n'));
  let redis;
  try {
    for (const file of files) writeFileSync(path.join(dir, file.name), file.code);
    const env = {};
    if (block.marker.needs.includes('redis')) {
      redis = await startRedis(await freePort());
      env.REDIS_URL = redis.url;
    }
    writeFileSync(path.join(dir, 'example.mjs'), block.code);
    try {
      await runNode(['example.mjs'], { cwd: dir, env });
    } catch (error) {
      error.message = `${block.name}: the example ${error.message}\n--- example.mjs ---\n${block.code}`;
      throw error;
    }
  } finally {
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the documentation has JavaScript examples, and their markers are well formed', () => {
  assert.ok(jsBlocks.length > 0, 'no ```js block found in README.md, CONTRIBUTING.md or docs/*.md');
  const problems = jsBlocks.filter((block) => block.marker.problem).map((block) => `${block.name} ${block.marker.problem}`);
  // A marker anywhere else (a blank line before the fence, a sh block) would silently do nothing.
  const marked = new Set(jsBlocks.map((block) => `${block.file}:${block.line - 1}`));
  for (const file of documentationFiles()) {
    withoutCodeBlocks(readDocumentation(file))
      .split('\n')
      .forEach((line, index) => {
        if (/^\s*<!--\s*example\b/.test(line) && !marked.has(`${file}:${index + 1}`)) problems.push(`${file}:${index + 1} has an example marker that is not on the line right before a \`\`\`js fence`);
      });
  }
  assert.deepEqual(problems, []);
  const notRun = jsBlocks.filter((block) => block.marker.notRun);
  assert.ok(notRun.length <= MAX_NOT_RUN, `${notRun.length} examples are marked "not run" (at most ${MAX_NOT_RUN}): make them runnable\n${notRun.map((block) => `${block.name}: ${block.marker.notRun}`).join('\n')}`);
});

describe('documentation examples', { concurrency: CONCURRENCY }, () => {
  const missingRedis = redisMissing();
  for (const block of jsBlocks) {
    if (block.marker.problem) continue;
    let skip = false;
    if (block.marker.notRun) skip = `not run: ${block.marker.notRun}`;
    else if (block.marker.needs.includes('redis') && missingRedis) skip = `needs redis: ${missingRedis}`;
    it(block.name, { skip, timeout: TIMEOUT_MS + 15_000 }, () => runBlock(block));
  }
});

const tsBlocks = blocks.filter(isTypeScript);

test('the TypeScript examples type-check under strict against the package declarations', { skip: tsBlocks.length === 0 && 'no ```ts block', timeout: 120_000 }, async () => {
  const code = tsBlocks.map((block) => block.code).join('\n');
  const dir = projectDirectory(code, ['@types/node']);
  try {
    const sources = tsBlocks.map((block, index) => ({ block, file: `example-${index}.ts` }));
    for (const { block, file } of sources) writeFileSync(path.join(dir, file), `${block.code}\nexport {};\n`);
    const compilerOptions = { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022'], types: ['node'] };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }));
    const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      await runNode([tsc, '-p', '.', '--pretty', 'false'], { cwd: dir });
    } catch (error) {
      // Point each diagnostic at the documentation's line rather than the temporary file's.
      const message = error.message.replace(/example-(\d+)\.ts\((\d+),(\d+)\)/g, (_, index, row, column) => {
        const { block } = sources[Number(index)];
        return `${block.file}:${block.line + Number(row)}:${column}`;
      });
      throw new Error(`tsc reported errors:\n${message}`, { cause: error });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
