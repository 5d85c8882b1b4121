// Imports lib/native.js from the package root given in argv[2] and prints
// what the loader concluded.
const root = process.argv[2];
const native = await import(new URL('lib/native.js', `file://${root}/`).href);
console.log(JSON.stringify({ available: native.nativeAvailable, reason: native.nativeUnavailableReason, binary: native.nativeBinary }));
