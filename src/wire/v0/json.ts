/**
 * The JSON text of the v0 read-only endpoints. Upstream writes them with
 * the same writer as its protobuf JSON: integers bare, doubles with a decimal
 * point even when whole (`4.0`, `1700000000.0`). A JS number cannot tell the
 * two apart, so the renderers wrap every double-typed value in a `Double`,
 * and `toV0Json` writes it with the protobuf JSON spelling.
 */
import { formatDouble } from '../json-encode.js';

/** A value that upstream types as a double. Plain `JSON.stringify` sees the number. */
export class Double {
  constructor(readonly value: number) {}

  toJSON(): number {
    return this.value;
  }
}

/**
 * Compact JSON, as `JSON.stringify` would write it (keys in insertion order,
 * `undefined` members left out, `toJSON` honoured), except that a `Double`
 * is written with `formatDouble`.
 */
export function toV0Json(value: unknown): string {
  return write(value) ?? 'null';
}

/** undefined for a value `JSON.stringify` leaves out of an object. */
function write(value: unknown): string | undefined {
  if (value instanceof Double) return formatDouble(value.value);
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  const withJson = value as { toJSON?: unknown };
  if (typeof withJson.toJSON === 'function') return write((withJson.toJSON as () => unknown).call(value));
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  const parts: string[] = [];
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const json = write(member);
    if (json !== undefined) parts.push(`${JSON.stringify(key)}:${json}`);
  }
  return `{${parts.join(',')}}`;
}
