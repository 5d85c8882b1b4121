// The UDP transport: authenticated datagrams to an explicit list of peers.
// Best effort, like UDP itself: a lost datagram leaves a peer's entry stale
// until its ttl, so give entries a ttl as a backstop.

import dgram from 'node:dgram';
import { ArenaCacheError, codes } from '../errors.js';
import { resolvePeers } from './bus-options.js';

const RECEIVE_BUFFER_BYTES = 4 * 2 ** 20;

export class UdpTransport {
  /** @type {'udp'} */
  name = 'udp';
  #socket = null;
  #peers;
  #options;
  #bus;
  /**
   * Settles once everything handed over so far has been sent (or has failed).
   * @type {Promise<unknown>}
   */
  #last = Promise.resolve();

  /** @param {{ address, port, peers, maxDatagramBytes, family }} options  @param bus the InvalidationBus's transport side */
  constructor(options, bus) {
    this.#options = options;
    this.#peers = options.peers;
    this.#bus = bus;
    this.maxBytes = options.maxDatagramBytes;
  }

  async start() {
    const { family, address, port } = this.#options;
    // A larger receive buffer rides out bursts (the kernel caps it at net.core.rmem_max).
    const socket = dgram.createSocket({ type: family, recvBufferSize: RECEIVE_BUFFER_BYTES });
    await new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address, port, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    }).catch((cause) => {
      try {
        socket.close();
      } catch {
        // never bound: nothing to close
      }
      throw new ArenaCacheError(codes.ERR_INVALIDATION_TRANSPORT, `the UDP socket could not be bound to ${address}:${port}: ${cause.message}`, { cause });
    });
    // A datagram is read whole: nothing a sender puts in one can straddle two.
    socket.on('message', (datagram, from) => this.#bus.receive(datagram, from));
    socket.on('error', (error) => this.#bus.transportError(error));
    this.#socket = socket;
  }

  /** The bound { address, family, port }. */
  address() {
    return this.#socket.address();
  }

  setPeers(peers) {
    this.#peers = resolvePeers(peers, 'peers');
  }

  /**
   * Sends the invalidations to every peer; resolves when the kernel has
   * taken every datagram. One send at a time: handing the kernel everything
   * at once only overflows the receivers' socket buffers, and UDP drops.
   */
  send(invalidations) {
    const datagrams = this.#bus.encode(invalidations, this.maxBytes);
    this.#last = this.#last.then(() => this.#sendAll(datagrams));
    return this.#last;
  }

  /**
   * Sends a hello or an answer (see senders.js) to `to` ({ address, port }:
   * where the message that prompted it came from), or to every peer. In
   * order after the invalidations handed over before it.
   */
  sendControl(datagram, to) {
    this.#last = this.#last.then(() => this.#sendAll([datagram], to === undefined ? this.#peers : [to], false));
    return this.#last;
  }

  /**
   * Sends each datagram to each peer; settles when the kernel has taken (or
   * refused: see InvalidationBus#sendFailed) every one. Never rejects.
   * @param {Buffer[]} datagrams
   * @param {{ address: string, port: number }[]} [peers]
   * @param {boolean} [counted] false for a hello or an answer (not counted as sent)
   * @returns {Promise<unknown>}
   */
  #sendAll(datagrams, peers = this.#peers, counted = true) {
    const socket = this.#socket;
    // Closed meanwhile: only a hello or an answer can still be queued (close() waits for invalidations).
    if (socket === null) return Promise.resolve();
    const sends = [];
    for (const { address, port } of peers) {
      for (const datagram of datagrams) {
        sends.push(
          new Promise((resolve) => {
            const done = (error) => {
              if (error) this.#bus.sendFailed(error, `${address}:${port}`);
              else if (counted) this.#bus.sent(datagram);
              resolve();
            };
            try {
              socket.send(datagram, port, address, done);
            } catch (error) {
              done(error);
            }
          }),
        );
      }
    }
    return Promise.all(sends);
  }

  async close() {
    const socket = this.#socket;
    this.#socket = null;
    if (socket !== null) await new Promise((resolve) => socket.close(resolve));
  }
}
