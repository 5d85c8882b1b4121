// A JSON codec for the tests that need a codec other than the default.
export const jsonCodec = Object.freeze({
  name: 'json',
  encode: (value) => Buffer.from(JSON.stringify(value)),
  decode: (bytes) => JSON.parse(bytes.toString()),
});
