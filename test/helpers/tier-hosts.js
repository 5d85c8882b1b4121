// Helpers of the Redis-tier tests: hosts in child processes
// (test/fixtures/tier-host.js), and a TCP proxy in front of Redis that can cut
// one host off (a network partition: Redis keeps running, and its data).
import { fork } from 'node:child_process';
import net from 'node:net';

const EXIT_DEADLINE_MS = 10_000;

/**
 * Forks a host with { path, secret, redisUrl, namespace, channel, ttl }.
 * Resolves to { call(cmd, args), stop() } once its stack has started.
 */
export async function startTierHost(options) {
  const child = fork(new URL('../fixtures/tier-host.js', import.meta.url), [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const pending = new Map();
  let nextId = 0;
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`tier host exited with ${code} before it was ready`)));
    child.on('message', (message) => {
      if (message.ready) return resolve();
      if (message.startError !== undefined) return reject(new Error(`tier host could not start: ${message.startError}`));
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) waiting.reject(Object.assign(new Error(message.error.message), { remoteName: message.error.name }));
      else waiting.resolve(message.result);
    });
  });
  let stopped = null;
  return {
    child,
    call(cmd, args = {}) {
      return new Promise((resolve, reject) => {
        if (!child.connected) return reject(new Error(`tier host is gone (${cmd})`));
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, ...args });
      });
    },
    /** Closes the host's stack and resolves to how the process ended: { code, signal, exitedByItself }. */
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null && child.connected) await this.call('close').catch(() => {});
        let timer;
        const deadline = new Promise((resolve) => {
          timer = setTimeout(() => resolve(null), EXIT_DEADLINE_MS);
        });
        const ended = await Promise.race([exited, deadline]);
        clearTimeout(timer);
        if (ended !== null) return { ...ended, exitedByItself: true };
        // Something kept it alive (an open handle): end it, and say so.
        child.kill('SIGKILL');
        return { ...(await exited), exitedByItself: false };
      })();
      return stopped;
    },
  };
}

/**
 * A TCP proxy on a free loopback port to 127.0.0.1:`targetPort`. cut() drops
 * every connection through it and refuses new ones (they are accepted and
 * closed at once) until restore(). hold() keeps Redis's replies (requests
 * still go through) until release(); `heldBytes` says how much is held.
 */
export async function startProxy(targetPort) {
  const sockets = new Set();
  const links = new Set();
  let open = true;
  const track = (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server = net.createServer((client) => {
    track(client);
    if (!open) return client.destroy();
    const upstream = net.connect(targetPort, '127.0.0.1');
    track(upstream);
    const link = { client, held: null };
    links.add(link);
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (link.held === null) client.write(chunk);
      else link.held.push(chunk);
    });
    client.once('close', () => {
      links.delete(link);
      upstream.destroy();
    });
    upstream.once('close', () => client.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      open = true;
    },
    hold() {
      for (const link of links) link.held ??= [];
    },
    get heldBytes() {
      let bytes = 0;
      for (const link of links) for (const chunk of link.held ?? []) bytes += chunk.length;
      return bytes;
    },
    release() {
      for (const link of links) {
        const held = link.held ?? [];
        link.held = null;
        for (const chunk of held) link.client.write(chunk);
      }
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
