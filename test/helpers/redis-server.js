// A throwaway redis-server on a loopback port, for the Redis transport's tests.
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';

/** Why Redis tests cannot run here, or null when redis-server is installed. */
export function redisMissing() {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.error ? 'redis-server is not installed (apt-get install redis-server; .ci/run does it)' : null;
}

export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepting(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts redis-server on `port` (no persistence); resolves to { port, url, kill() } once it accepts connections. */
export async function startRedis(port) {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 10_000;
  while (!(await accepting(port))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} on port ${port}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not accept connections on port ${port} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    /** SIGKILL: connections drop without a goodbye, as in a crash. */
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
