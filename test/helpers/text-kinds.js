// String values that say what they should be, of every kind of text a string
// value can hold: all ASCII (stored with the record's ASCII_TEXT mark and
// read with one latin1Slice), Latin-1 (128-255: 2 UTF-8 bytes each), other
// BMP characters, astral ones (surrogate pairs), lone surrogates (stored as
// U+FFFD) and a mix. Each value starts with its sequence number and kind and
// is otherwise derived from them, with an exact UTF-8 length, so a reader
// can tell a whole value from a torn one without knowing what was written.

import { seededRandom } from './seeded-random.js';

export const TEXT_KINDS = Object.freeze(['ascii', 'latin1', 'bmp', 'astral', 'lone', 'mixed']);

/** One character (or a lone surrogate and an ASCII letter, so two never pair up) of `kind`, and its UTF-8 bytes. */
function character(kind, random) {
  switch (kind) {
    case 'ascii':
      return [String.fromCharCode(random.int(128)), 1];
    case 'latin1':
      return [String.fromCharCode(128 + random.int(128)), 2];
    case 'bmp': {
      const unit = 0x100 + random.int(0xffff - 0x100 - 0x800);
      return [String.fromCharCode(unit < 0xd800 ? unit : unit + 0x800), unit < 0x800 ? 2 : 3];
    }
    case 'astral':
      return [String.fromCodePoint(0x10000 + random.int(0x100000)), 4];
    case 'lone':
      // Stored as U+FFFD: 3 bytes.
      return [`${String.fromCharCode(0xd800 + random.int(0x800))}x`, 4];
    default:
      return character(TEXT_KINDS[random.int(TEXT_KINDS.length - 1)], random);
  }
}

/**
 * The value of write `sequence` of `kind` (an index into TEXT_KINDS):
 * `bytes` UTF-8 bytes (at least 16), the last characters ASCII where the
 * kind's next one would not fit.
 */
export function textValue(sequence, kind, bytes) {
  const random = seededRandom(Math.imul(sequence, 31) + kind);
  const head = `${sequence}.${kind}|`;
  const parts = [head];
  let used = head.length;
  for (;;) {
    const [next, size] = character(TEXT_KINDS[kind], random);
    if (used + size > bytes) break;
    parts.push(next);
    used += size;
  }
  for (; used < bytes; used++) parts.push(String.fromCharCode(97 + random.int(26)));
  return parts.join('');
}

/** A string as the cache gives it back: lone surrogates become U+FFFD, as in UTF-8. */
export function wellFormed(text) {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** Whether `value`, read back, is a whole value of textValue() (of any sequence and kind): null, or what is wrong. */
export function textProblem(value) {
  if (typeof value !== 'string') return `not a string: ${typeof value}`;
  const head = /^(\d+)\.(\d)\|/.exec(value);
  if (head === null || Number(head[2]) >= TEXT_KINDS.length) return `no sequence and kind at its start: ${JSON.stringify(value.slice(0, 20))}`;
  const expected = wellFormed(textValue(Number(head[1]), Number(head[2]), Buffer.byteLength(value, 'utf8')));
  return value === expected ? null : `torn: ${value.length} characters, ${JSON.stringify(value.slice(0, 20))}...`;
}
