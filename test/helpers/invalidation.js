// Helpers of the invalidation tests: peers in child processes, and waiting
// for something to become true.
import { fork } from 'node:child_process';
export { until } from './until.js';

export const SECRET = 'a secret every test peer shares';

/** Starts a peer process (test/fixtures/invalidation-peer.js) with these bus options. */
export async function startPeer(options) {
  const child = fork(new URL('../fixtures/invalidation-peer.js', import.meta.url), [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 0;
  const ready = new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`peer exited with ${code} before it was ready`)));
    child.on('message', (message) => {
      if (message.ready) return resolve(message);
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    });
  });
  const { port } = await ready;
  return {
    child,
    port,
    address: `127.0.0.1:${port}`,
    call(cmd, args = {}) {
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, ...args });
      });
    },
    async stop() {
      if (child.exitCode !== null || !child.connected) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await this.call('close').catch(() => {});
      await exited;
    },
  };
}

/**
 * A UDP socket on 127.0.0.1 that keeps every invalidation datagram it
 * receives (a host an attacker controls, or a tap on the wire; hellos and
 * answers are left out), and sends datagrams as they are.
 */
export async function startRecorder() {
  const dgram = await import('node:dgram');
  const { openDatagram, secretBytes } = await import('../../lib/invalidation/wire.js');
  const socket = dgram.createSocket('udp4');
  const datagrams = [];
  socket.on('message', (datagram) => {
    if (openDatagram(datagram, { secret: secretBytes(SECRET) }).type === 'invalidations') datagrams.push(datagram);
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    datagrams,
    address: `127.0.0.1:${socket.address().port}`,
    send: (datagram, port) => new Promise((resolve, reject) => socket.send(datagram, port, '127.0.0.1', (error) => (error ? reject(error) : resolve()))),
    close: () => new Promise((resolve) => socket.close(resolve)),
  };
}

/**
 * Makes two running UDP buses peers of each other (plus `extra` addresses
 * for `a`), and resolves once each has verified the other (its answer came
 * back), so that markers they send are stored, not deleted.
 */
export async function peer(a, b, extra = []) {
  const { once } = await import('node:events');
  const verified = Promise.all([once(a, 'verified'), once(b, 'verified')]);
  a.setPeers([`127.0.0.1:${b.address.port}`, ...extra]);
  b.setPeers([`127.0.0.1:${a.address.port}`]);
  await verified;
}
