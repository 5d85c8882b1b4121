// Recorded cache traces from a directory, for the hit-ratio benchmark's
// real-trace mode. Each file is one trace, compressed or not (.gz by
// node:zlib, .xz by the xz command, .bz2 by the bzip2 command, .zst by
// node:zlib where this Node has zstd), in one of five formats:
//
//   text    one object id per line (libCacheSim's plain traces, the LIRS
//           paper's traces); a line "*" (a LIRS trace's breakpoint) is no
//           request;
//   arc     lines "start_block n_blocks ignore request_no", each n_blocks
//           page requests from start_block on (the ARC paper's .lis files,
//           counted as the paper counts them);
//   int64   big-endian 64-bit keys, 8 bytes each, no separator (Caffeine's
//           simulator's binary traces, such as Corda's and Scarab's);
//   int32   big-endian 32-bit keys, 4 bytes each, no separator (the cache2k
//           traces and LIRS2's CloudPhysics ones in Caffeine's simulator);
//   oracleGeneral  libCacheSim's binary records of 24 bytes, little-endian:
//           uint32 time, uint64 object id, uint32 object size, int64 the
//           request number of the object's next request, unused here; the
//           key is the object id, and a record of size 0 is no request, as
//           libCacheSim skips it by default.
//
// The format is told by the file's name with its compression suffix
// removed, then by its content: a name ending in .lis is arc, one ending in
// .oracleGeneral or .oracleGeneral.bin (libCacheSim's names) is
// oracleGeneral, one ending in .int32 is int32 and one ending in .int64 is
// int64; otherwise bytes that are all printable text with line breaks are
// text, and anything else whose length is a multiple of 8 is int64. The
// binary formats cannot be told apart by their bytes (a file of an even
// number of 32-bit keys, or of 24-byte records, is also a whole number of
// 64-bit keys), so a 32-bit or oracleGeneral trace must be named so: the
// upstream cache2k and CloudPhysics files (*.trace.xz) are renamed
// NAME.int32.xz. Keys become dense ids (0, 1, 2...) in order of first
// request, so a trace is a Uint32Array like the generated ones.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/** The bytes that `command -dc` (xz, bzip2) writes for `bytes`; `install` is the package that has it. */
function decompressWith(command, install, bytes, file) {
  try {
    return execFileSync(command, ['-dc'], { input: bytes, maxBuffer: 2 ** 31 - 1 });
  } catch (error) {
    throw new Error(`${file}: could not decompress with the ${command} command (${error.code === 'ENOENT' ? `${command} is not installed: apt-get install ${install}` : error.message})`, { cause: error });
  }
}

/** The decompressors by suffix: what a file ending so is turned into bytes with. */
const DECOMPRESSORS = {
  '.gz': (bytes) => zlib.gunzipSync(bytes),
  '.zst': (bytes, file) => {
    if (typeof zlib.zstdDecompressSync !== 'function') throw new Error(`${file}: this Node has no zstd in node:zlib; recompress the trace with gzip or xz`);
    return zlib.zstdDecompressSync(bytes);
  },
  '.xz': (bytes, file) => decompressWith('xz', 'xz-utils', bytes, file),
  '.bz2': (bytes, file) => decompressWith('bzip2', 'bzip2', bytes, file),
};

/** The file's bytes, decompressed, and its name without the compression suffix. */
function readTraceBytes(file) {
  const suffix = path.extname(file);
  const decompress = DECOMPRESSORS[suffix];
  const bytes = readFileSync(file);
  return decompress === undefined ? { bytes, name: path.basename(file) } : { bytes: decompress(bytes, file), name: path.basename(file, suffix) };
}

/** Whether `bytes` (a sample of them) are text lines: printable ASCII, tabs and line breaks only. */
function looksLikeText(bytes) {
  const end = Math.min(bytes.length, 1 << 16);
  for (let i = 0; i < end; i++) {
    const byte = bytes[i];
    if (byte === 10 || byte === 13 || byte === 9) continue;
    if (byte < 32 || byte > 126) return false;
  }
  return bytes.length > 0;
}

/** The formats told by the name's ending (see the top), and the size of their records in bytes. */
const NAMED_FORMATS = [
  { suffix: /\.oracleGeneral(\.bin)?$/, format: 'oracleGeneral', record: 24, what: "libCacheSim's oracleGeneral records of 24 bytes" },
  { suffix: /\.int32$/, format: 'int32', record: 4, what: '32-bit keys of 4 bytes' },
  { suffix: /\.int64$/, format: 'int64', record: 8, what: '64-bit keys of 8 bytes' },
];

/** The format of a trace (see the top): 'arc', 'oracleGeneral', 'int32', 'int64' or 'text'. */
export function traceFormat(name, bytes) {
  if (name.endsWith('.lis')) return 'arc';
  const named = NAMED_FORMATS.find(({ suffix }) => suffix.test(name));
  if (named !== undefined) {
    if (bytes.length % named.record !== 0) throw new Error(`${name}: named as ${named.format}, but ${bytes.length} bytes are not a whole number of ${named.what} (${bytes.length % named.record} bytes over)`);
    return named.format;
  }
  if (looksLikeText(bytes)) return 'text';
  if (bytes.length % 8 === 0 && bytes.length > 0) return 'int64';
  throw new Error(`${name}: neither text lines, an ARC .lis file, nor 64-bit keys (${bytes.length} bytes, not a multiple of 8); a trace of 32-bit keys must be named NAME.int32, a libCacheSim one NAME.oracleGeneral`);
}

/** Dense ids for keys, in order of first request. */
class KeyIds {
  ids = new Map();
  id(key) {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }
}

function textTrace(bytes) {
  const keys = new KeyIds();
  const requests = [];
  for (const line of bytes.toString('latin1').split('\n')) {
    const key = line.trim();
    if (key !== '' && key !== '*') requests.push(keys.id(key));
  }
  return { trace: Uint32Array.from(requests), objects: keys.ids.size };
}

function arcTrace(bytes, name) {
  const keys = new KeyIds();
  const requests = [];
  for (const line of bytes.toString('latin1').split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 2 || fields[0] === '') continue;
    const start = Number(fields[0]);
    const count = Number(fields[1]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(count) || count < 0) throw new Error(`${name}: not an ARC trace line: ${JSON.stringify(line.slice(0, 80))}`);
    for (let block = 0; block < count; block++) requests.push(keys.id(start + block));
  }
  return { trace: Uint32Array.from(requests), objects: keys.ids.size };
}

/** A trace of keys of `width` bytes each, no separator, the key at `offset` read by `read(bytes, offset)`. */
function fixedWidthTrace(bytes, width, read) {
  const keys = new KeyIds();
  const trace = new Uint32Array(bytes.length / width);
  for (let i = 0; i < trace.length; i++) trace[i] = keys.id(read(bytes, i * width));
  return { trace, objects: keys.ids.size };
}

const int64Trace = (bytes) => fixedWidthTrace(bytes, 8, (data, offset) => data.readBigInt64BE(offset));
const int32Trace = (bytes) => fixedWidthTrace(bytes, 4, (data, offset) => data.readInt32BE(offset));

function oracleGeneralTrace(bytes) {
  const keys = new KeyIds();
  const requests = [];
  for (let offset = 0; offset < bytes.length; offset += 24) {
    if (bytes.readUInt32LE(offset + 12) !== 0) requests.push(keys.id(bytes.readBigUInt64LE(offset + 4)));
  }
  return { trace: Uint32Array.from(requests), objects: keys.ids.size };
}

/** The reader of each format: (bytes, name) to { trace, objects }. */
const READERS = { arc: arcTrace, text: textTrace, int64: int64Trace, int32: int32Trace, oracleGeneral: oracleGeneralTrace };

/** One trace file: { name, format, trace (Uint32Array of dense ids), objects (distinct keys) }. */
export function readTraceFile(file) {
  const { bytes, name } = readTraceBytes(file);
  const format = traceFormat(name, bytes);
  const parsed = READERS[format](bytes, name);
  if (parsed.trace.length === 0) throw new Error(`${file}: no requests`);
  return { name, format, ...parsed };
}

/** The traces of every file in `directory` (not its subdirectories, nor README/licence texts), by name. */
export function readTraceDirectory(directory) {
  const files = readdirSync(directory)
    .filter((entry) => !/^(readme|license|licence|copying)/i.test(entry) && !entry.endsWith('.md'))
    .map((entry) => path.join(directory, entry))
    .filter((file) => statSync(file).isFile())
    .sort();
  if (files.length === 0) throw new Error(`HIT_TRACES=${directory} holds no trace files`);
  return files.map(readTraceFile);
}
