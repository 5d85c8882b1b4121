// InvalidationPort: a SharedCache's side of the InvalidationBus
// (lib/invalidation/bus.js), which gets it through cache[kInvalidation]().
// It holds the outbox the bus drains, which bus runs on the cache (at most
// one), and applies what peers publish: a set of a version marker, a delete,
// a clear, or a clear of every key under some prefixes. Peers' writes are
// applied to the arena and not published again.

import { kWaitFully } from '../internal-symbols.js';
import { keyHasPrefix } from './key-encoder.js';
import { NUMBER_BYTES, VALUE_CODEC, VALUE_NUMBER, VALUE_RAW, VALUE_UTF8 } from '../arena/entries/record.js';

export class InvalidationPort {
  /** @type {import('./shared-cache.js').SharedCache} */
  #cache;
  #arena;
  #keyEncoder;
  #storeEncoded;
  #storedValue;
  /** The bus started on the cache, or null. */
  bus = null;

  /**
   * @param {import('./shared-cache.js').SharedCache} cache
   * @param {object} side what the cache keeps private:
   * @param {import('./outbox.js').Outbox | null} side.outbox where the cache's writes go (null when attached from a bare buffer)
   * @param {import('../arena/entries/arena.js').Arena} side.arena
   * @param {import('./key-encoder.js').KeyEncoder} side.keyEncoder the cache's key scratch
   * @param {(kind: number, payload: string | Uint8Array, length: number) => boolean} side.storeEncoded
   *   stores a value in stored form under the key last encoded (default ttl, nothing published); false when it does not fit
   * @param {(key: unknown) => Buffer | undefined} side.storedValue a marker's stored form for the wire (its kind, then its bytes)
   */
  constructor(cache, { outbox, arena, keyEncoder, storeEncoded, storedValue }) {
    this.#cache = cache;
    this.outbox = outbox;
    this.#arena = arena;
    this.#keyEncoder = keyEncoder;
    this.#storeEncoded = storeEncoded;
    this.#storedValue = storedValue;
  }

  attachBus(bus) {
    this.bus = bus;
  }

  detachBus(bus) {
    if (this.bus === bus) this.bus = null;
  }

  /** The cache closes: the bus sends what is waiting, then stops; nothing more to apply. */
  closeBus() {
    this.bus?.close().catch(() => {});
    this.bus = null;
  }

  closed() {
    return this.#cache.closed;
  }

  /**
   * Applies a peer's invalidation. It must land (its sender was told it
   * did): not bounded by lockWaitMs, as a stopped holder would otherwise
   * leave the stale value behind for good.
   */
  apply(invalidation) {
    return this.#cache[kWaitFully](() => this.#apply(invalidation));
  }

  /** A version marker's stored form for the wire: its value kind, then its bytes; undefined when absent. */
  storedValue(key) {
    return this.#storedValue(key);
  }

  /** A peer's invalidation, applied to the arena without publishing it again (clearPrefix takes a list of prefixes). */
  #apply({ op, key, value, prefixes }) {
    if (this.#cache.closed) return;
    const arena = this.#arena;
    const keys = this.#keyEncoder;
    if (op === 'clear') {
      arena.clear();
      return;
    }
    if (op === 'clearPrefix') {
      const matching = [];
      for (const stored of this.#cache.keys()) if (prefixes.some((prefix) => keyHasPrefix(stored, prefix))) matching.push(stored);
      for (const stored of matching) {
        keys.encode(stored);
        arena.delete(keys);
      }
      return;
    }
    keys.encode(key);
    const kind = op === 'set' ? value[0] : -1;
    if (kind === VALUE_UTF8 || kind === VALUE_RAW || kind === VALUE_CODEC) {
      const bytes = value.subarray(1);
      if (this.#storeEncoded(kind, kind === VALUE_UTF8 ? bytes.toString('utf8') : bytes, bytes.length)) return;
    } else if (kind === VALUE_NUMBER && value.length === 1 + NUMBER_BYTES) {
      if (this.#storeEncoded(kind, value.readDoubleLE(1), NUMBER_BYTES)) return;
    }
    // A delete, or a marker this cache cannot hold (or of an unknown kind): at least not stale.
    arena.delete(keys);
  }
}
