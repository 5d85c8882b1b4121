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

/** A loopback port whose cluster bus port (port + 10000) is free too. */
async function clusterPort() {
  for (;;) {
    const port = await freePort();
    if (port < 55535 && !(await accepting(port + 10000))) return port;
  }
}

/**
 * Starts `masters` redis-servers in cluster mode on loopback (no replicas,
 * no persistence, each in a directory of its own for its nodes.conf) and
 * joins them with `redis-cli --cluster create`; resolves once every node
 * says cluster_state:ok, to { ports, kill() }.
 */
export async function startRedisCluster(masters = 3) {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'arenacache-redis-cluster-'));
  const nodes = [];
  const kill = async () => {
    await Promise.all(nodes.map((node) => node.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort();
      const cwd = join(dir, String(port));
      (await import('node:fs')).mkdirSync(cwd);
      const child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no'],
        { cwd, stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      nodes.push({ port, kill: async () => { if (child.exitCode === null) child.kill('SIGKILL'); await exited; } });
      const deadline = Date.now() + 10_000;
      while (!(await accepting(port))) {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} on port ${port}`);
        if (Date.now() > deadline) throw new Error(`redis-server did not accept connections on port ${port} within 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const ports = nodes.map((node) => node.port);
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr || create.stdout}`);
    const deadline = Date.now() + 10_000;
    for (const port of ports) {
      for (;;) {
        const info = spawnSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' }).stdout;
        if (/cluster_state:ok/.test(info)) break;
        if (Date.now() > deadline) throw new Error(`the cluster node on port ${port} did not reach cluster_state:ok within 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return { ports, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}

/** An ioredis client of the server on `port` (options over loopback and lazyConnect), connected, and disconnected after the test `t`. */
export async function connectClient(t, port, options = {}) {
  const { Redis } = await import('ioredis');
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, ...options });
  client.on('error', () => {});
  await client.connect();
  t.after(() => client.disconnect());
  return client;
}

/** A redis-server on a free port and a connected client of it (see connectClient), both gone after the test `t`: { server, client }. */
export async function startRedisWithClient(t, clientOptions) {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  return { server, client: await connectClient(t, server.port, clientOptions) };
}
