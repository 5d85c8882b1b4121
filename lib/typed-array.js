// The intrinsic byte length of a typed array. `value.byteLength` can be
// overridden by a subclass or a getter; the bytes TypedArray#set copies
// cannot, and a record must be sized for exactly those.
export const typedArrayByteLength = Function.prototype.call.bind(
  Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'byteLength').get,
);
