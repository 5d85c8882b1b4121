// Type assertions shared by the type tests. They do nothing at run time.

/** true when A and B are the same type (not merely assignable). */
export type Exact<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only for `true`: `assertType<Exact<typeof x, number>>()`. */
export function assertType<T extends true>(): void {}

/** Compiles only when `value` is assignable to `T`; returns it. */
export function expectType<T>(value: T): T {
  return value;
}

/** `expectExactType<T>()(value)` compiles only when the type of `value` is exactly `T`. */
export function expectExactType<T>() {
  return <V>(_value: V, ..._exact: Exact<T, V> extends true ? [] : ['type mismatch', T, V]): void => {};
}
