// Every export of the raw native addon called with wrong arguments, and the
// error each call must throw (see test/native.arguments.test.js, which runs
// them in a child process: before the C++ checked its arguments, some of
// these calls aborted the process or crashed it).
//
// `args()` builds the arguments afresh for each call (some are detached
// buffers or objects with getters). Every case has exactly one thing wrong;
// the other arguments are valid, and chosen so that the call would fail
// harmlessly if it went through anyway: paths in a directory that does not
// exist, a descriptor number nothing has open, a futex word that does not
// hold the expected value.

import { describe } from '../../lib/errors.js';

const MISSING = '/nonexistent-arenacache-arguments/a';
const UNUSED_FD = 1_000_000;
const INT32_MAX = 2 ** 31 - 1;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/**
 * The wording of the addon's messages for a value that was passed:
 * lib/errors.js's describe(), except that symbols, functions and objects
 * are named by kind only (the addon never runs JavaScript, such as a getter
 * of constructor.name, while it words an error).
 */
export function describeArgument(value) {
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'function') return 'a function';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return describe(value);
  if (value instanceof DataView) return 'a DataView';
  if (ArrayBuffer.isView(value)) {
    // The typed array's own kind: a Buffer is a Uint8Array.
    const kind = value[Symbol.toStringTag];
    return `${kind.startsWith('Int') ? 'an' : 'a'} ${kind} of length ${value.length}`;
  }
  if (value instanceof ArrayBuffer) return 'an ArrayBuffer';
  return 'an object';
}

/** A typed array whose buffer has been transferred away (it reads as length 0). */
function detached(Type, length) {
  const array = new Type(length);
  structuredClone(array.buffer, { transfer: [array.buffer] });
  return array;
}

// Parameters: a name, a valid value, and the wrong values with the error
// each gives ([value, 'TypeError' | 'RangeError']), worded by `what`.

const typeErrors = (...values) => values.map((value) => [value, 'TypeError']);
const rangeErrors = (...values) => values.map((value) => [value, 'RangeError']);

function integer(name, min, max, valid) {
  const what = `an integer from ${min} to ${max}`;
  return {
    name,
    valid,
    what,
    bad: [...typeErrors(undefined, null, String(valid), {}, 10n, true), ...rangeErrors(min - 1, valid + 0.5, NaN, max + 1, Infinity)],
  };
}

const fd = (name) => integer(name, 0, INT32_MAX, UNUSED_FD);

function path(name, valid = MISSING) {
  return {
    name,
    valid,
    what: 'a non-empty string without NUL bytes',
    bad: [...typeErrors(undefined, null, 5, {}, Buffer.from('/a'), Symbol('s')), ...rangeErrors('', 'a\0b')],
  };
}

function boolean(name) {
  return { name, valid: false, what: 'a boolean', bad: typeErrors(undefined, null, 1, 'true') };
}

function uint8Array(name) {
  return {
    name,
    valid: new Uint8Array(new SharedArrayBuffer(16)),
    what: 'a Uint8Array',
    bad: typeErrors(undefined, null, 'x', [1], new Int32Array(2), new DataView(new ArrayBuffer(8)), new ArrayBuffer(8), new Uint8ClampedArray(2)),
  };
}

const futexArray = () => ({
  name: 'array',
  valid: new Int32Array(new SharedArrayBuffer(8)),
  what: 'a non-empty Int32Array',
  bad: [...typeErrors(undefined, null, [0], new Uint8Array(8), new Float64Array(1), 'x'), ...rangeErrors(detached(Int32Array, 2), new Int32Array(0))],
});

// The futex word is 0: a wait for 1 returns "not-equal" at once.
const futexIndex = () => integer('index', 0, 1, 0);

const rootFilesParams = () => [
  integer('op', 1, 10, 2),
  fd('rootFd'),
  {
    name: 'rootPath',
    valid: MISSING,
    what: 'an absolute path without NUL bytes',
    bad: [...typeErrors(undefined, null, 5, {}), ...rangeErrors('', 'relative', '/a\0b')],
  },
  { name: 'path', valid: 'a', what: 'a string without NUL bytes', bad: [...typeErrors(undefined, null, 5, ['a']), ...rangeErrors('a\0b')] },
  { name: 'dest', valid: '', what: 'a string without NUL bytes', bad: [...typeErrors(undefined, null, 5), ...rangeErrors('b\0')] },
  integer('flags', 0, INT32_MAX, 0),
  integer('mode', 0, 0o7777, 0),
  // Read only by ROOT_STORE and ROOT_REWRITE (extra cases below).
  { name: 'data', valid: undefined, optional: true, bad: [] },
];

// A job that hashes a file in a directory that does not exist: one job, so
// every column has length 1.
function validJobs(overrides = {}) {
  return {
    ops: new Uint8Array([4]),
    srcs: [MISSING],
    dsts: [''],
    offsets: new Float64Array([0]),
    lengths: new Float64Array([-1]),
    modes: new Uint32Array([0o644]),
    atimeSec: new Float64Array([0]),
    atimeNsec: new Uint32Array([0]),
    mtimeSec: new Float64Array([0]),
    mtimeNsec: new Uint32Array([0]),
    ...overrides,
  };
}

function validOptions(overrides = {}) {
  return {
    threads: 1,
    reflink: false,
    copyFileRange: false,
    hash: false,
    checkExpected: false,
    packPath: '',
    packOffset: 0,
    retries: 0,
    sourceRoot: '',
    ...overrides,
  };
}

/** A clone job (it needs a destination and times). */
const cloneJobs = (overrides = {}) => validJobs({ ops: new Uint8Array([1]), dsts: [`${MISSING}-copy`], ...overrides });

// The exports, each with its parameters ([optional] ones last).
const EXPORTS = [
  { fn: 'currentThreadId', params: [] },
  { fn: 'isThreadAlive', params: [integer('pid', 1, INT32_MAX, 1), integer('tid', 1, INT32_MAX, 1)] },
  { fn: 'fileOpen', params: [path('path'), integer('createMode', 0, 0o7777, 0)] },
  { fn: 'fileOpenReadOnly', params: [path('path')] },
  { fn: 'fileStat', params: [fd('fd')] },
  { fn: 'fileLock', params: [fd('fd'), integer('kind', 0, 2, 0), boolean('wait')] },
  { fn: 'fileLockHolder', params: [fd('fd')] },
  { fn: 'fileResize', params: [fd('fd'), integer('size', 0, SAFE_MAX, 4096)] },
  { fn: 'fileMap', params: [fd('fd'), integer('size', 1, SAFE_MAX, 4096), integer('populate', 0, 2, 0)] },
  { fn: 'fileMapReadOnly', params: [fd('fd'), integer('size', 1, SAFE_MAX, 4096)] },
  { fn: 'fileClose', params: [fd('fd')] },
  { fn: 'mappingRetain', params: [uint8Array('view')] },
  { fn: 'mappingRelease', params: [uint8Array('view')] },
  { fn: 'mappingReleaseClean', params: [uint8Array('view'), integer('offset', 0, SAFE_MAX, 0), integer('mark', 0, 2 ** 32 - 1, 0)] },
  { fn: 'mappingFlush', params: [uint8Array('view')] },
  { fn: 'mappingFaults', params: [] },
  { fn: 'mappingTruncated', params: [uint8Array('view')] },
  { fn: 'livenessHold', params: [uint8Array('view'), integer('id', 1, 2 ** 30, 1)] },
  { fn: 'livenessRelease', params: [uint8Array('view'), integer('id', 1, 2 ** 30, 1)] },
  { fn: 'livenessAlive', params: [uint8Array('view'), integer('id', 1, 2 ** 30, 1)] },
  { fn: 'mappingLockHolder', params: [uint8Array('view')] },
  {
    fn: 'futexWait',
    params: [
      futexArray(),
      futexIndex(),
      { ...integer('expected', -(2 ** 31), INT32_MAX, 1), bad: [...typeErrors(undefined, null, '1', {}), ...rangeErrors(2 ** 31, 0.5, NaN)] },
      { name: 'timeoutMs', valid: 0, what: 'a number of milliseconds', bad: typeErrors(undefined, null, '1', {}, 1n) },
    ],
  },
  {
    fn: 'futexWake',
    params: [
      futexArray(),
      futexIndex(),
      { name: 'count', valid: 1, what: 'a non-negative integer or Infinity', bad: [...typeErrors(undefined, null, '1', {}), ...rangeErrors(-1, 1.5, NaN, -Infinity)] },
    ],
  },
  { fn: 'rootFilesSync', params: rootFilesParams() },
  { fn: 'rootFiles', params: rootFilesParams() },
  { fn: 'closeDescriptor', params: [fd('fd')] },
  {
    fn: 'scanTree',
    params: [
      path('root'),
      { name: 'exclude', valid: [], what: 'an array of file names', bad: typeErrors(undefined, null, 'x', {}, new Uint8Array(1)) },
    ],
  },
  {
    fn: 'runFileJobs',
    params: [
      { name: 'jobs', valid: validJobs(), what: 'an object of job columns', bad: typeErrors(undefined, null, 5, 'x', () => {}) },
      { name: 'options', valid: validOptions(), what: 'an object of options', bad: typeErrors(undefined, null, 5, 'x') },
      { name: 'onProgress', valid: undefined, optional: true, what: 'a function or undefined', bad: typeErrors(null, 5, 'f', {}) },
    ],
  },
  { fn: 'exchangePaths', params: [path('a'), path('b', `${MISSING}-b`)] },
  { fn: 'renameNoReplace', params: [path('a'), path('b', `${MISSING}-b`)] },
  { fn: 'probeReflink', params: [path('dir')] },
  { fn: 'syncFilesystem', params: [path('path')] },
];

function signature({ fn, params }) {
  const required = params.filter((p) => !p.optional).map((p) => p.name);
  const optional = params.filter((p) => p.optional).map((p) => `[, ${p.name}]`);
  return `${fn}(${required.join(', ')}${optional.join('')})`;
}

function countWords(min, max) {
  if (max === 0) return 'no arguments';
  if (min === max) return `${min} argument${min === 1 ? '' : 's'}`;
  return max === min + 1 ? `${min} or ${max} arguments` : `${min} to ${max} arguments`;
}

/** The wrong-argument message of `fn`'s argument `index` (0-based) named `name`. */
export const argumentMessage = (fn, index, name, what, value) =>
  `${fn}: argument ${index + 1} (${name}) must be ${what} (got ${describeArgument(value)})`;

/**
 * Every case: { fn, label, args: () => any[], error: { name, message } }.
 * `error.name` 'Error' with a message of our own is what a getter threw:
 * the addon lets it through unchanged.
 */
export function argumentCases() {
  const cases = [];
  for (const spec of EXPORTS) {
    const { fn, params } = spec;
    const min = params.filter((p) => !p.optional).length;
    const max = params.length;
    const countError = (got) => ({ name: 'TypeError', message: `${signature(spec)}: expected ${countWords(min, max)} (got ${got})` });
    const valid = () => params.map((p) => p.valid);
    const counts = new Set([0, min - 1, max + 1].filter((n) => n >= 0 && (n < min || n > max)));
    for (const n of counts) {
      cases.push({ fn, label: `${n} argument${n === 1 ? '' : 's'}`, args: () => valid().slice(0, n).concat(Array(Math.max(0, n - max)).fill(0)), error: countError(n) });
    }
    params.forEach((param, index) => {
      param.bad.forEach(([value, name], k) => {
        cases.push({
          fn,
          label: `${param.name} = ${describeArgument(value)} (#${k})`,
          // Rebuilt per call: valid values may be detached or consumed.
          args: () => {
            const args = EXPORTS.find((e) => e.fn === fn).params.map((p) => p.valid);
            args[index] = param.bad[k][0];
            return args.slice(0, Math.max(min, index + 1));
          },
          error: { name, message: argumentMessage(fn, index, param.name, param.what, value) },
        });
      });
    });
  }
  cases.push(...extraCases(), ...spelledOut());
  return cases;
}

/** One case of each shape of message, the message written out in full (the rest build theirs with the words above). */
function spelledOut() {
  const words = new Int32Array(new SharedArrayBuffer(8));
  const jobs = validJobs({ offsets: new Float64Array([-1]), lengths: new Float64Array([0]) });
  const long = `/${'r'.repeat(50)}`.slice(1);
  return [
    ['fileOpen', () => [], 'TypeError', 'fileOpen(path, createMode): expected 2 arguments (got 0)'],
    ['currentThreadId', () => [1], 'TypeError', 'currentThreadId(): expected no arguments (got 1)'],
    ['runFileJobs', () => [{}], 'TypeError', 'runFileJobs(jobs, options[, onProgress]): expected 2 or 3 arguments (got 1)'],
    ['fileOpen', () => [5, 0], 'TypeError', 'fileOpen: argument 1 (path) must be a non-empty string without NUL bytes (got 5)'],
    ['fileOpen', () => ['a\0b', 0], 'RangeError', 'fileOpen: argument 1 (path) must be a non-empty string without NUL bytes (got "a\\u0000b")'],
    ['fileOpen', () => [MISSING, -1], 'RangeError', 'fileOpen: argument 2 (createMode) must be an integer from 0 to 4095 (got -1)'],
    ['fileLock', () => [UNUSED_FD, 1, 'yes'], 'TypeError', 'fileLock: argument 3 (wait) must be a boolean (got "yes")'],
    ['futexWait', () => [words, 2, 0, 0], 'RangeError', 'futexWait: argument 2 (index) must be an integer from 0 to 1 (got 2)'],
    ['futexWake', () => [new Uint8Array(4), 0, 1], 'TypeError',
      'futexWake: argument 1 (array) must be a non-empty Int32Array (got a Uint8Array of length 4)'],
    ['mappingFlush', () => [{}], 'TypeError', 'mappingFlush: argument 1 (view) must be a Uint8Array (got an object)'],
    ['scanTree', () => [MISSING, ['a', 'b/c']], 'RangeError',
      'scanTree: argument 2 (exclude[1]) must be a file name: a non-empty string without \'/\' or NUL bytes (got "b/c")'],
    ['rootFilesSync', () => [2, UNUSED_FD, long, '', '', 0, 0], 'RangeError',
      'rootFilesSync: argument 3 (rootPath) must be an absolute path without NUL bytes (got "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr…")'],
    ['runFileJobs', () => [{ ...jobs, srcs: [] }, {}], 'RangeError',
      'runFileJobs: argument 1 (jobs.srcs) must be an array of 1 strings (got an array of length 0)'],
    ['runFileJobs', () => [jobs, {}], 'RangeError', 'runFileJobs: argument 1 (jobs.offsets[0]) must be a non-negative integer (got -1)'],
    ['runFileJobs', () => [validJobs(), {}], 'TypeError',
      'runFileJobs: argument 2 (options.threads) must be an integer from 1 to 64 (got undefined)'],
  ].map(([fn, args, name, message], k) => ({ fn, label: `spelled out #${k}`, args, error: { name, message } }));
}

const getterError = { name: 'Error', message: 'thrown by a getter' };
const boom = () => {
  throw new Error('thrown by a getter');
};

/** Cases the parameter lists above cannot say: values inside objects and arrays, and getters. */
function extraCases() {
  const cases = [];
  const add = (fn, label, args, name, message) => cases.push({ fn, label, args, error: { name, message } });

  // rootFiles: data is read only by ROOT_STORE (9) and ROOT_REWRITE (10).
  for (const fn of ['rootFilesSync', 'rootFiles']) {
    for (const [op, value] of [[9, undefined], [9, 'text'], [10, [1, 2]], [10, new Int32Array(1)], [9, null]]) {
      add(fn, `op ${op}, data = ${describeArgument(value)}`, () => [op, UNUSED_FD, MISSING, 'a', '', 0, 0, value], 'TypeError',
        argumentMessage(fn, 7, 'data', 'a Uint8Array', value));
    }
  }

  // scanTree: each excluded name.
  const exclude = (value) => argumentMessage('scanTree', 1, 'exclude[0]', "a file name: a non-empty string without '/' or NUL bytes", value);
  for (const [value, name] of [[5, 'TypeError'], [null, 'TypeError'], ['', 'RangeError'], ['a/b', 'RangeError'], ['a\0', 'RangeError']]) {
    add('scanTree', `exclude[0] = ${describeArgument(value)}`, () => [MISSING, [value]], name, exclude(value));
  }
  add('scanTree', 'exclude with a throwing getter', () => {
    const names = ['a'];
    Object.defineProperty(names, 0, { get: boom });
    return [MISSING, names];
  }, getterError.name, getterError.message);

  // runFileJobs: the columns and options inside its objects.
  const jobs = (name, what, value) => argumentMessage('runFileJobs', 0, `jobs.${name}`, what, value);
  const option = (name, what, value) => argumentMessage('runFileJobs', 1, `options.${name}`, what, value);
  const run = (label, jobsValue, optionsValue, name, message) =>
    add('runFileJobs', label, () => [jobsValue(), optionsValue()], name, message);
  const withJobs = (overrides) => () => validJobs(overrides);
  const withOptions = (overrides) => () => validOptions(overrides);

  run('no ops', withJobs({ ops: undefined }), withOptions(), 'TypeError', jobs('ops', 'a Uint8Array', undefined));
  run('ops as an array', withJobs({ ops: [4] }), withOptions(), 'TypeError', jobs('ops', 'a Uint8Array', [4]));
  run('srcs not an array', withJobs({ srcs: MISSING }), withOptions(), 'TypeError', jobs('srcs', 'an array of 1 strings', MISSING));
  run('srcs too long', withJobs({ srcs: [MISSING, MISSING] }), withOptions(), 'RangeError', jobs('srcs', 'an array of 1 strings', [MISSING, MISSING]));
  run('dsts too short', withJobs({ dsts: [] }), withOptions(), 'RangeError', jobs('dsts', 'an array of 1 strings', []));
  run('srcs[0] a number', withJobs({ srcs: [5] }), withOptions(), 'TypeError', jobs('srcs[0]', 'a string', 5));
  run('offsets as a Uint32Array', withJobs({ offsets: new Uint32Array(1) }), withOptions(), 'TypeError',
    jobs('offsets', 'a Float64Array of 1 numbers', new Uint32Array(1)));
  run('lengths too long', withJobs({ lengths: new Float64Array(3) }), withOptions(), 'RangeError',
    jobs('lengths', 'a Float64Array of 1 numbers', new Float64Array(3)));
  run('modes detached', withJobs({ modes: detached(Uint32Array, 1) }), withOptions(), 'RangeError',
    jobs('modes', 'a Uint32Array of 1 numbers', new Uint32Array(0)));
  run('mtimeNsec missing', withJobs({ mtimeNsec: undefined }), withOptions(), 'TypeError',
    jobs('mtimeNsec', 'a Uint32Array of 1 numbers', undefined));
  run('expected of the wrong type', withJobs({ expected: 'x' }), withOptions(), 'TypeError',
    jobs('expected', 'a Uint8Array of 32 bytes (32 per job)', 'x'));
  run('expected too short', withJobs({ expected: new Uint8Array(31) }), withOptions(), 'RangeError',
    jobs('expected', 'a Uint8Array of 32 bytes (32 per job)', new Uint8Array(31)));
  run('checkExpected without expected', withJobs(), withOptions({ checkExpected: true }), 'TypeError',
    jobs('expected', 'a Uint8Array of 32 bytes (32 per job)', undefined));
  const opWhat = '1 (clone), 2 (pack), 3 (extract) or 4 (hash)';
  run('op 0', withJobs({ ops: new Uint8Array([0]) }), withOptions(), 'RangeError', jobs('ops[0]', opWhat, 0));
  run('op 5', withJobs({ ops: new Uint8Array([5]) }), withOptions(), 'RangeError', jobs('ops[0]', opWhat, 5));
  run('srcs[0] empty', withJobs({ srcs: [''] }), withOptions(), 'RangeError', jobs('srcs[0]', 'a non-empty string without NUL bytes', ''));
  run('srcs[0] with NUL', withJobs({ srcs: ['a\0b'] }), withOptions(), 'RangeError', jobs('srcs[0]', 'a non-empty string without NUL bytes', 'a\0b'));
  run('hash dsts[0] with NUL', withJobs({ dsts: ['a\0'] }), withOptions(), 'RangeError', jobs('dsts[0]', 'a string without NUL bytes', 'a\0'));
  run('clone dsts[0] empty', () => cloneJobs({ dsts: [''] }), withOptions(), 'RangeError', jobs('dsts[0]', 'a non-empty string without NUL bytes', ''));
  run('clone atimeSec NaN', () => cloneJobs({ atimeSec: new Float64Array([NaN]) }), withOptions(), 'RangeError', jobs('atimeSec[0]', 'an integer', NaN));
  run('clone mtimeSec 1.5', () => cloneJobs({ mtimeSec: new Float64Array([1.5]) }), withOptions(), 'RangeError', jobs('mtimeSec[0]', 'an integer', 1.5));
  run('clone atimeNsec 1e9', () => cloneJobs({ atimeNsec: new Uint32Array([1e9]) }), withOptions(), 'RangeError',
    jobs('atimeNsec[0]', 'an integer from 0 to 999999999', 1e9));
  run('hash offset -1', withJobs({ offsets: new Float64Array([-1]) }), withOptions(), 'RangeError',
    jobs('offsets[0]', 'a non-negative integer', -1));
  run('hash offset NaN', withJobs({ offsets: new Float64Array([NaN]) }), withOptions(), 'RangeError',
    jobs('offsets[0]', 'a non-negative integer', NaN));
  run('hash length 1.5', withJobs({ lengths: new Float64Array([1.5]) }), withOptions(), 'RangeError',
    jobs('lengths[0]', 'an integer (negative: the whole file)', 1.5));
  run('extract length -1', withJobs({ ops: new Uint8Array([3]), dsts: [`${MISSING}-x`], lengths: new Float64Array([-1]) }), withOptions(), 'RangeError',
    jobs('lengths[0]', 'a non-negative integer', -1));
  run('threads 0', withJobs(), withOptions({ threads: 0 }), 'RangeError', option('threads', 'an integer from 1 to 64', 0));
  run('threads "2"', withJobs(), withOptions({ threads: '2' }), 'TypeError', option('threads', 'an integer from 1 to 64', '2'));
  run('threads missing', withJobs(), withOptions({ threads: undefined }), 'TypeError', option('threads', 'an integer from 1 to 64', undefined));
  run('retries 11', withJobs(), withOptions({ retries: 11 }), 'RangeError', option('retries', 'an integer from 0 to 10', 11));
  run('reflink 1', withJobs(), withOptions({ reflink: 1 }), 'TypeError', option('reflink', 'a boolean', 1));
  run('hash missing', withJobs(), withOptions({ hash: undefined }), 'TypeError', option('hash', 'a boolean', undefined));
  run('packPath 5', withJobs(), withOptions({ packPath: 5 }), 'TypeError', option('packPath', 'a string without NUL bytes', 5));
  run('packPath with NUL', withJobs(), withOptions({ packPath: 'p\0' }), 'RangeError', option('packPath', 'a string without NUL bytes', 'p\0'));
  run('a pack job without packPath', withJobs({ ops: new Uint8Array([2]) }), withOptions(), 'RangeError',
    option('packPath', 'a non-empty string when jobs include op 2 (pack)', ''));
  run('packOffset -1', withJobs(), withOptions({ packOffset: -1 }), 'RangeError', option('packOffset', 'a non-negative integer', -1));
  run('packOffset 2^53', withJobs(), withOptions({ packOffset: 2 ** 53 }), 'RangeError', option('packOffset', 'a non-negative integer', 2 ** 53));
  run('sourceRoot 5', withJobs(), withOptions({ sourceRoot: 5 }), 'TypeError', option('sourceRoot', 'a string without NUL bytes', 5));
  run('an absolute source under sourceRoot', withJobs(), withOptions({ sourceRoot: MISSING }), 'RangeError',
    jobs('srcs[0]', 'a path relative to options.sourceRoot', MISSING));
  run('jobs with a throwing getter', () => Object.defineProperty(validJobs(), 'srcs', { get: boom }), withOptions(),
    getterError.name, getterError.message);
  run('options as a throwing proxy', withJobs(), () => new Proxy({}, { get: boom }), getterError.name, getterError.message);
  run('srcs[0] behind a throwing getter', withJobs({ srcs: Object.defineProperty([MISSING], 0, { get: boom }) }), withOptions(),
    getterError.name, getterError.message);
  // A getter that runs after ops was read detaches a later column: the
  // column is checked as it is when read.
  run('a column detached by a getter', () => {
    const columns = validJobs();
    const { offsets, srcs } = columns;
    return Object.defineProperty(columns, 'srcs', {
      get() {
        structuredClone(offsets.buffer, { transfer: [offsets.buffer] });
        return srcs;
      },
    });
  }, withOptions(), 'RangeError', jobs('offsets', 'a Float64Array of 1 numbers', new Float64Array(0)));
  return cases;
}

/** The function exports the cases cover. */
export const coveredExports = EXPORTS.map((e) => e.fn);

/** The exports that answer with a Promise: they did their work on the thread pool. */
export const asyncExports = new Set(['mappingFlush', 'rootFiles', 'scanTree', 'runFileJobs', 'syncFilesystem']);
