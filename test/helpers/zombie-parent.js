// Leaves a zombie on purpose: starts the command in argv as its child,
// prints the child's pid, then blocks its own event loop in a synchronous
// read of stdin. libuv reaps a child only from the event loop, so the child,
// once killed, stays a zombie (dead, its descriptors closed, its pid and
// /proc/<pid>/stat still there) until a line or EOF arrives on stdin; then
// this process reaps it and exits.
import { spawn } from 'node:child_process';
import { readSync } from 'node:fs';

const child = spawn(process.argv[2], process.argv.slice(3), { stdio: ['ignore', 'inherit', 'inherit'] });
process.stdout.write(`${child.pid}\n`);
try {
  readSync(0, Buffer.alloc(1));
} catch {
  // stdin gone: reap and exit all the same
}
