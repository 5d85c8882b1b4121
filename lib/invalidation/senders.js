// SenderTable: replay protection that does not trust the hosts' clocks.
//
// Every bus start picks a random sender id and numbers its messages from 1.
// A receiver remembers, per sender, the highest number seen and which of the
// WINDOW numbers below it it has seen, so a message seen before is refused
// ('replay') and one too old to tell is refused ('stale'), whatever the
// clocks say.
//
// What sequence numbers alone cannot tell is whether a message of a sender
// met for the first time was sent before this bus started: a datagram
// recorded earlier and replayed to a restarted host. (Comparing its
// timestamp with our start, as the first version did, drops every message
// of a peer whose clock is behind ours.) So a bus asks a sender it does not
// know to answer (a hello addressed to it); the answer, addressed to our
// id, which did not exist before we started, was necessarily sent after our
// start, and carries the sender's number and clock at that moment. From it:
//   - messages numbered above the answer's were sent after our start: applied;
//   - messages numbered up to it and stamped, by the sender's own clock, at
//     or before our start are refused ('stale'): that is where a replay of a
//     recording made before our start falls. The sender's clock at our start
//     is learnt from the answer (its stamp less the time since our start,
//     on our monotonic clock), so the two clocks never need to agree; the
//     answer's travel time makes this boundary early by that much, never late.
//   - the others (sent after our start, or within that travel time before
//     it) are applied cautiously, see below.
// Until a sender has answered ("unverified"), its invalidations are applied
// cautiously, and only when stamped within windowMs of our clock: deletes
// and clears as they are, but a version marker's new value as a delete. A
// replay can then at worst make this host miss (reload) entries; it can
// never store an old value. A message that arrives after a later one of the
// same sender (UDP reordered them) is applied cautiously too, so an older
// marker value never overwrites a newer one.
//
// Memory is bounded: at most maxSenders verified and maxUnverified
// unverified senders, the least recently heard forgotten first. A forgotten
// sender is met again as a new one: unverified until it answers again.

/** How many sequence numbers below the highest seen are remembered (a multiple of 32). */
export const SEQ_WINDOW = 1024;

const NEW = 0;
const LATE = 1;
const SEEN = 2;
const TOO_OLD = 3;

class Sender {
  verified = false;
  /** Once verified: the answer's number; messages up to it may predate our start. */
  floorSeq = 0;
  /** Once verified: our start by the sender's clock (its messages up to floorSeq stamped at or before it are refused). */
  floorStamp = -Infinity;
  highest = 0;
  /** Bit (seq % SEQ_WINDOW): seq was seen; meaningful for the SEQ_WINDOW numbers up to highest. */
  seen = new Uint32Array(SEQ_WINDOW / 32);
  /** When we last asked it to answer (performance.now()), -Infinity: never. */
  helloAt = -Infinity;

  constructor(id) {
    this.id = id;
  }

  position(seq) {
    if (seq > this.highest) return NEW;
    if (seq <= this.highest - SEQ_WINDOW) return TOO_OLD;
    const bit = seq % SEQ_WINDOW;
    return (this.seen[bit >>> 5] & (1 << (bit & 31))) !== 0 ? SEEN : LATE;
  }

  mark(seq) {
    if (seq > this.highest) {
      // The numbers skipped over are now inside the window, not seen.
      if (seq - this.highest >= SEQ_WINDOW) this.seen.fill(0);
      else for (let skipped = this.highest + 1; skipped <= seq; skipped++) this.#clear(skipped % SEQ_WINDOW);
      this.highest = seq;
    }
    const bit = seq % SEQ_WINDOW;
    this.seen[bit >>> 5] |= 1 << (bit & 31);
  }

  #clear(bit) {
    this.seen[bit >>> 5] &= ~(1 << (bit & 31));
  }
}

export class SenderTable {
  #verified = new Map(); // id -> Sender, least recently heard first
  #unverified = new Map();

  /** @param {{ windowMs: number, maxSenders: number, maxUnverified: number }} options */
  constructor({ windowMs, maxSenders, maxUnverified }) {
    this.windowMs = windowMs;
    this.maxSenders = maxSenders;
    this.maxUnverified = maxUnverified;
  }

  get size() {
    return this.#verified.size + this.#unverified.size;
  }

  /** The sender's record, or undefined. */
  get(id) {
    return this.#verified.get(id) ?? this.#unverified.get(id);
  }

  /**
   * Judges a message (a parsed, authentic one: see wire.js) from sender `id`
   * received at `now` (our clock). Returns { reason: 'replay' | 'stale', sender }
   * when it must be refused, else { sender, cautious } and remembers it.
   * `sender` is the sender's record (its helloAt is the caller's to keep).
   */
  admit(id, { type, seq, timestamp }, now) {
    let sender = this.#verified.get(id);
    if (sender !== undefined) {
      this.#verified.delete(id);
      this.#verified.set(id, sender);
    } else {
      sender = this.#unverified.get(id);
      if (sender !== undefined) this.#unverified.delete(id);
      else sender = new Sender(id);
      this.#unverified.set(id, sender);
      if (this.#unverified.size > this.maxUnverified) this.#unverified.delete(this.#unverified.keys().next().value);
    }
    const position = sender.position(seq);
    if (position === SEEN) return { reason: 'replay', sender };
    if (position === TOO_OLD) return { reason: 'stale', sender };
    let cautious = position === LATE;
    if (sender.verified) {
      if (seq <= sender.floorSeq) {
        if (timestamp <= sender.floorStamp) return { reason: 'stale', sender };
        cautious = true;
      }
    } else {
      // Hellos and answers carry no invalidations: they are looked at
      // whatever their stamp, so that a peer whose clock is far off can
      // still be asked, answer, and be verified.
      if (type === 'invalidations' && !(Math.abs(now - timestamp) <= this.windowMs)) return { reason: 'stale', sender };
      cautious = true;
    }
    sender.mark(seq);
    return { sender, cautious };
  }

  /**
   * `sender` answered our hello with `answer` (its seq and timestamp),
   * received `sinceStart` ms after our bus started: from now on its
   * messages are judged by number.
   */
  verify(sender, { seq, timestamp }, sinceStart) {
    if (sender.verified) return;
    sender.verified = true;
    sender.floorSeq = seq;
    sender.floorStamp = timestamp - sinceStart;
    this.#unverified.delete(sender.id);
    this.#verified.set(sender.id, sender);
    if (this.#verified.size > this.maxSenders) this.#verified.delete(this.#verified.keys().next().value);
  }
}
