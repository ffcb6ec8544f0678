// The JSON codec of the wire layer: upstream-compatible JSON text to and from
// the in-memory message representation described by ./generated/types.ts.
export { decodeJson, type DecodeResult } from './json-decode.js';
export { encodeJson } from './json-encode.js';
