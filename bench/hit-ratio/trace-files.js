// Recorded cache traces from a directory, for the hit-ratio benchmark's
// real-trace mode. Each file is one trace, compressed or not (.gz by
// node:zlib, .xz by the xz command, .zst by node:zlib where this Node has
// zstd), in one of three formats:
//
//   text    one object id per line (libCacheSim's plain traces);
//   arc     lines "start_block n_blocks ignore request_no", each n_blocks
//           page requests from start_block on (the ARC paper's .lis files,
//           counted as the paper counts them);
//   int64   big-endian 64-bit keys, 8 bytes each, no separator (Caffeine's
//           simulator's binary traces, such as Corda's).
//
// The format is the file's name with its compression suffix removed: a
// name ending in .lis is arc; otherwise bytes that are all printable text
// with line breaks are text, and anything else whose length is a multiple
// of 8 is int64. Keys become dense ids (0, 1, 2...) in order of first
// request, so a trace is a Uint32Array like the generated ones.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/** The decompressors by suffix: what a file ending so is turned into bytes with. */
const DECOMPRESSORS = {
  '.gz': (bytes) => zlib.gunzipSync(bytes),
  '.zst': (bytes, file) => {
    if (typeof zlib.zstdDecompressSync !== 'function') throw new Error(`${file}: this Node has no zstd in node:zlib; recompress the trace with gzip or xz`);
    return zlib.zstdDecompressSync(bytes);
  },
  '.xz': (bytes, file) => {
    try {
      return execFileSync('xz', ['-dc'], { input: bytes, maxBuffer: 2 ** 31 - 1 });
    } catch (error) {
      throw new Error(`${file}: could not decompress with the xz command (${error.code === 'ENOENT' ? 'xz is not installed: apt-get install xz-utils' : error.message})`, { cause: error });
    }
  },
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

/** The format of a trace (see the top): 'arc', 'text' or 'int64'. */
export function traceFormat(name, bytes) {
  if (name.endsWith('.lis')) return 'arc';
  if (looksLikeText(bytes)) return 'text';
  if (bytes.length % 8 === 0 && bytes.length > 0) return 'int64';
  throw new Error(`${name}: neither text lines, an ARC .lis file, nor 64-bit keys (${bytes.length} bytes, not a multiple of 8)`);
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
    if (key !== '') requests.push(keys.id(key));
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

function int64Trace(bytes) {
  const keys = new KeyIds();
  const trace = new Uint32Array(bytes.length / 8);
  for (let i = 0; i < trace.length; i++) trace[i] = keys.id(bytes.readBigInt64BE(i * 8));
  return { trace, objects: keys.ids.size };
}

/** One trace file: { name, format, trace (Uint32Array of dense ids), objects (distinct keys) }. */
export function readTraceFile(file) {
  const { bytes, name } = readTraceBytes(file);
  const format = traceFormat(name, bytes);
  const parsed = format === 'arc' ? arcTrace(bytes, name) : format === 'text' ? textTrace(bytes) : int64Trace(bytes);
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
