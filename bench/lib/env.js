// Reading benchmark settings from the environment, with errors that name the
// variable.

export function positiveInt(name, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new RangeError(`${name} must be a positive integer (got "${raw}")`);
  return n;
}

export function intList(name, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const list = raw.split(',').map((part) => Number(part.trim()));
  if (list.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new RangeError(`${name} must be a comma-separated list of positive integers (got "${raw}")`);
  }
  return list;
}

export function numberList(name, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const list = raw.split(',').map((part) => Number(part.trim()));
  if (list.some((n) => !Number.isFinite(n) || n <= 0)) {
    throw new RangeError(`${name} must be a comma-separated list of positive numbers (got "${raw}")`);
  }
  return list;
}

/** The path after --json, or BENCH_JSON. */
export function jsonPath() {
  const flag = process.argv.indexOf('--json');
  return flag >= 0 ? process.argv[flag + 1] : process.env.BENCH_JSON;
}

export function positiveNumber(name, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new RangeError(`${name} must be a positive number (got "${raw}")`);
  return n;
}

/** A comma-separated list of integer percentages, 0 to 100. */
export function percentList(name, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const list = raw.split(',').map((part) => Number(part.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < 0 || n > 100)) {
    throw new RangeError(`${name} must be a comma-separated list of integer percentages from 0 to 100 (got "${raw}")`);
  }
  return list;
}

/** A comma-separated list of names, each one of `allowed`. */
export function nameList(name, allowed, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const list = raw.split(',').map((part) => part.trim());
  for (const item of list) {
    if (!allowed.includes(item)) throw new RangeError(`${name} must list names from ${allowed.join(', ')} (got "${item}")`);
  }
  return list;
}
