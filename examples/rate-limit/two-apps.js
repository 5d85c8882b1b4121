// Two separate apps on one machine (two services, or two versions of one
// during a deploy) that share one rate limit through a file: each runs
// express-rate-limit over a SharedCacheStore opened on the same path with
// the same prefix, so a client's requests count against one limit whichever
// app they reach.
//
//   node examples/rate-limit/two-apps.js --demo
//       starts two apps (separate processes), makes 20 requests alternating
//       between them, prints which passed, stops them
//   APP=orders PORT=3001 node examples/rate-limit/two-apps.js &
//   APP=billing PORT=3002 node examples/rate-limit/two-apps.js &
//       two apps serving until stopped: curl localhost:3001 and :3002
//
// The file is on /dev/shm (memory only) where there is one, else in
// os.tmpdir(); LIMIT_FILE overrides it. Needs the native addon, express and
// express-rate-limit.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { SharedCacheStore } from 'arenacache/rate-limit';

const demo = process.argv.includes('--demo') || process.env.EXAMPLE_SMOKE === '1';

if (demo) {
  await runDemo();
} else {
  serve(process.env.APP ?? 'app', Number(process.env.PORT ?? 3000), process.env.LIMIT_FILE ?? path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'arenacache-two-apps.arena'));
}

/** One app: 8 requests per client per minute, counted in `file` under the prefix both apps use. */
function serve(name, port, file) {
  const store = new SharedCacheStore({ path: file, prefix: 'shared-limit:' });
  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 8, store, standardHeaders: 'draft-6', legacyHeaders: false }));
  app.get('/', (req, res) => res.send(`hello from ${name}`));
  const server = app.listen(port, '127.0.0.1', () => console.log(`${name} listening on port ${server.address().port}`));
  process.on('SIGTERM', () => server.close(() => store.shutdown()));
}

/** Starts this file twice as separate apps on one file, alternates 20 requests between them, stops them. */
async function runDemo() {
  const file = path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `arenacache-two-apps-${process.pid}.arena`);
  const apps = await Promise.all(['orders', 'billing'].map((name) => start(name, file)));
  try {
    console.log(`two apps (pids ${apps.map((app) => app.child.pid).join(' and ')}) share the limit file ${file}`);
    const lines = [];
    for (let i = 0; i < 20; i++) {
      const app = apps[i % 2];
      const response = await fetch(`http://127.0.0.1:${app.port}/`);
      lines.push(`${app.name}: ${response.status} ${response.status === 200 ? await response.text() : `(${(await response.text()).trim()})`}, remaining ${response.headers.get('ratelimit-remaining')}`);
    }
    console.log(lines.join('\n'));
    const passed = lines.filter((line) => / 200 /.test(line)).length;
    console.log(`passed: ${passed} of 20 (limit 8 per minute for both apps together), limited: ${20 - passed}`);
  } finally {
    for (const app of apps) app.child.kill('SIGTERM');
    await Promise.all(apps.map((app) => new Promise((resolve) => app.child.once('exit', resolve))));
    rmSync(file, { force: true });
    console.log('apps stopped, limit file removed');
  }
}

/** Runs one app as a child process on a free port; resolves with { name, port, child } once it listens. */
async function start(name, file) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], { env: { ...process.env, EXAMPLE_SMOKE: '', APP: name, PORT: '0', LIMIT_FILE: file }, stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: child.stdout })) {
    const match = /listening on port (\d+)$/.exec(line);
    if (match) return { name, port: Number(match[1]), child };
  }
  throw new Error(`${name} exited before it listened`);
}
