/**
 * What the small shell's text commands compute, as pure functions of their
 * arguments and input: printf's formats and echo's escapes, head and tail,
 * wc's counts, grep's patterns, test's expressions and date's formats.
 * The commands around them (`shell-commands.ts`) do the reading and the
 * writing.
 */
import { byteLength } from './sandbox.js';

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  e: '\x1b',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

/**
 * Backslash escapes as printf's format (and `echo -e`, `%b`) reads them:
 * `\n`, `\t`, `\\`, octal `\0NNN` (`\NNN` in a format). `stop`: the text
 * ended at `\c`, which ends all output.
 */
export function backslashEscapes(text: string, inFormat: boolean): { text: string; stop: boolean } {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const slash = text.indexOf('\\', i);
    if (slash < 0 || slash === text.length - 1) return { text: out + text.slice(i), stop: false };
    out += text.slice(i, slash);
    const c = text[slash + 1]!;
    i = slash + 2;
    if (c === 'c') return { text: out, stop: true };
    if (ESCAPES[c] !== undefined) out += ESCAPES[c];
    else if (inFormat && /[0-7]/.test(c)) {
      const digits = /^[0-7]{1,3}/.exec(text.slice(i - 1))![0];
      out += String.fromCharCode(Number.parseInt(digits, 8) & 0xff);
      i += digits.length - 1;
    } else if (c === '0') {
      const digits = /^[0-7]{0,3}/.exec(text.slice(i))![0];
      out += String.fromCharCode(Number.parseInt(`0${digits}`, 8) & 0xff);
      i += digits.length;
    } else out += `\\${c}`;
  }
  return { text: out, stop: false };
}

/** printf FORMAT ARGS: the text, and the messages of arguments that are not numbers (dash goes on with 0). */
export function printf(format: string, args: readonly string[]): { text: string; errors: string[] } {
  const errors: string[] = [];
  let text = '';
  let next = 0;
  const arg = () => (next < args.length ? args[next++]! : undefined);
  // The format is reused while arguments remain, as POSIX says; at least once.
  for (;;) {
    const before = next;
    const spec = /%([-+ 0#]*)(\d*)(?:\.(\d*))?([sdiuxXocbf%])?/g;
    let last = 0;
    let stop = false;
    for (let m = spec.exec(format); m !== null && !stop; m = spec.exec(format)) {
      const plain = backslashEscapes(format.slice(last, m.index), true);
      text += plain.text;
      last = spec.lastIndex;
      if (plain.stop) return { text, errors };
      const conversion = m[4];
      if (conversion === '%') text += '%';
      else if (conversion === undefined) text += m[0];
      else {
        const piece = convert(conversion, m[3], arg(), errors);
        stop = piece.stop;
        text += pad(piece.text, m[1]!, m[2]!, conversion);
      }
    }
    if (stop) return { text, errors };
    const rest = backslashEscapes(format.slice(last), true);
    text += rest.text;
    if (rest.stop || next === before || next >= args.length) return { text, errors };
  }
}

function convert(
  conversion: string,
  precision: string | undefined,
  value: string | undefined,
  errors: string[],
): { text: string; stop: boolean } {
  const v = value ?? '';
  switch (conversion) {
    case 's':
      return { text: precision === undefined ? v : v.slice(0, Number(precision)), stop: false };
    case 'b':
      return backslashEscapes(v, false);
    case 'c':
      return { text: v.slice(0, 1), stop: false };
    case 'f':
      return { text: number(v, errors).toFixed(precision === undefined ? 6 : Number(precision)), stop: false };
    default: {
      const n = Math.trunc(number(v, errors));
      const radix = conversion === 'o' ? 8 : conversion === 'x' || conversion === 'X' ? 16 : 10;
      const text =
        (conversion === 'u' || radix !== 10) && n < 0 ? (2n ** 64n + BigInt(n)).toString(radix) : n.toString(radix);
      return { text: conversion === 'X' ? text.toUpperCase() : text, stop: false };
    }
  }
}

/** A numeric argument: decimal, 0x hex, or 'c (a character's code); not a number is 0 and an error. */
function number(value: string, errors: string[]): number {
  if (value === '') return 0;
  if (value[0] === "'" || value[0] === '"') return value.codePointAt(1) ?? 0;
  const trimmed = value.trim();
  const n = /^[-+]?0x[0-9a-f]+$/i.test(trimmed) ? Number.parseInt(trimmed, 16) : Number(trimmed);
  if (trimmed === '' || !Number.isFinite(n)) {
    errors.push(`${value}: expected numeric value`);
    return 0;
  }
  return n;
}

function pad(text: string, flags: string, width: string, conversion: string): string {
  const w = width === '' ? 0 : Number(width);
  if (text.length >= w) return text;
  if (flags.includes('-')) return text.padEnd(w);
  if (flags.includes('0') && conversion !== 's' && conversion !== 'c' && conversion !== 'b') {
    const sign = text.startsWith('-') ? '-' : '';
    return sign + text.slice(sign.length).padStart(w - sign.length, '0');
  }
  return text.padStart(w);
}

/** The lines of a text, each with its newline (the last may have none). */
export function lines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    out.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** head -n N: the first N lines. */
export function head(text: string, count: number): string {
  return lines(text).slice(0, count).join('');
}

/** tail -n N (the last N lines), or tail -n +N (from line N on). */
export function tail(text: string, count: number, fromStart: boolean): string {
  const all = lines(text);
  return (fromStart ? all.slice(Math.max(0, count - 1)) : count === 0 ? [] : all.slice(-count)).join('');
}

export interface Counts {
  readonly lines: number;
  readonly words: number;
  readonly bytes: number;
}

export function count(text: string): Counts {
  let newlines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) newlines++;
  const words = text.split(/[ \t\n\r\v\f]+/).filter((w) => w !== '').length;
  return { lines: newlines, words, bytes: byteLength(text) };
}

/**
 * A grep pattern as a RegExp: with `fixed` (-F) the text itself; else a
 * basic regular expression (`.`, `*`, `^`, `$`, `[…]`, `\(…\)`, `\|`,
 * `\+`, `\?`), or with `extended` (-E) an extended one. Undefined when it
 * is not a valid expression.
 */
export function grepPattern(
  pattern: string,
  fixed: boolean,
  extended: boolean,
  ignoreCase: boolean,
): RegExp | undefined {
  const flags = ignoreCase ? 'i' : '';
  if (fixed) return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), flags);
  let source = '';
  if (extended) source = pattern;
  else
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '\\' && i + 1 < pattern.length) {
        const n = pattern[++i]!;
        source += '(){}|+?'.includes(n) ? n : `\\${n}`;
      } else if ('(){}|+?'.includes(c)) source += `\\${c}`;
      else if (c === '[') {
        const close = pattern.indexOf(']', i + (pattern[i + 1] === ']' ? 2 : pattern[i + 1] === '^' ? 3 : 1));
        if (close < 0) return undefined;
        source += pattern.slice(i, close + 1).replace(/\\/g, '\\\\');
        i = close;
      } else source += c;
    }
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** date's default format in the C locale. */
export const DATE_FORMAT = '%a %b %e %H:%M:%S %Z %Y';

/** A time's calendar fields in UTC (no Date in the core: days to a civil date, Hinnant's algorithm). */
export interface UtcTime {
  readonly year: number;
  /** 0-11. */
  readonly month: number;
  readonly day: number;
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
  readonly millis: number;
  /** 0 Sunday. */
  readonly weekday: number;
  /** 1-366. */
  readonly yearDay: number;
}

export function utc(ms: number): UtcTime {
  const days = Math.floor(ms / 86_400_000);
  const inDay = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 2 : mp - 10;
  const year = yoe + era * 400 + (month < 2 ? 1 : 0);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334][month]! + (leap && month > 1 ? 1 : 0);
  return {
    year,
    month,
    day,
    hours: Math.floor(inDay / 3_600_000),
    minutes: Math.floor(inDay / 60_000) % 60,
    seconds: Math.floor(inDay / 1000) % 60,
    millis: inDay % 1000,
    weekday: (((days + 4) % 7) + 7) % 7,
    yearDay: before + day,
  };
}

/** A time (ms since the epoch) in a date(1) format, in UTC. */
export function formatDate(ms: number, format: string): string {
  const d = utc(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  const fields: Readonly<Record<string, () => string>> = {
    Y: () => String(d.year),
    y: () => two(d.year % 100),
    m: () => two(d.month + 1),
    d: () => two(d.day),
    e: () => String(d.day).padStart(2, ' '),
    H: () => two(d.hours),
    M: () => two(d.minutes),
    S: () => two(d.seconds),
    N: () => `${String(d.millis).padStart(3, '0')}000000`,
    s: () => String(Math.floor(ms / 1000)),
    a: () => DAYS[d.weekday]!,
    b: () => MONTHS[d.month]!,
    j: () => String(d.yearDay).padStart(3, '0'),
    Z: () => 'UTC',
    z: () => '+0000',
    F: () => `${fields.Y!()}-${fields.m!()}-${fields.d!()}`,
    T: () => `${fields.H!()}:${fields.M!()}:${fields.S!()}`,
    D: () => `${fields.m!()}/${fields.d!()}/${fields.y!()}`,
    n: () => '\n',
    t: () => '\t',
    '%': () => '%',
  };
  return format.replace(/%(.)/g, (all, c: string) => fields[c]?.() ?? all);
}

/** What `test` (and `[`) decides: 0 true, 1 false, or an error (code 2) as dash words it. */
export type TestResult = number | { readonly error: string };

const UNARY = new Set(['-f', '-d', '-e', '-s', '-r', '-w', '-x', '-z', '-n']);
const BINARY = new Set(['=', '!=', '-eq', '-ne', '-lt', '-gt', '-le', '-ge']);

/**
 * test's expression by the number of its arguments, as POSIX sets it out:
 * 0 false; 1 true when not empty; 2 `! x` or a unary operator; 3 a binary
 * operator or `! unary`; 4 `! binary`. `file` tells what a path is.
 */
export function evaluateTest(
  args: readonly string[],
  file: (path: string) => 'file' | 'directory' | undefined,
  size: (path: string) => number,
): TestResult {
  if (args[0] === '!' && args.length > 1 && args.length <= 4) {
    const inner = evaluateTest(args.slice(1), file, size);
    return typeof inner === 'number' ? 1 - inner : inner;
  }
  if (args.length === 0) return 1;
  if (args.length === 1) return args[0] === '' ? 1 : 0;
  if (args.length === 2) {
    const [op, value] = args as [string, string];
    if (!UNARY.has(op)) return { error: `${op}: unexpected operator` };
    return unary(op, value, file, size) ? 0 : 1;
  }
  if (args.length === 3 && BINARY.has(args[1]!)) return binary(args[0]!, args[1]!, args[2]!);
  return { error: `${args[1]}: unexpected operator` };
}

function unary(
  op: string,
  value: string,
  file: (path: string) => 'file' | 'directory' | undefined,
  size: (path: string) => number,
): boolean {
  switch (op) {
    case '-z':
      return value === '';
    case '-n':
      return value !== '';
    case '-f':
      return file(value) === 'file';
    case '-d':
      return file(value) === 'directory';
    case '-s':
      return file(value) !== undefined && size(value) > 0;
    case '-x':
      return file(value) === 'directory';
    default:
      return file(value) !== undefined;
  }
}

function binary(left: string, op: string, right: string): TestResult {
  if (op === '=') return left === right ? 0 : 1;
  if (op === '!=') return left !== right ? 0 : 1;
  for (const n of [left, right]) if (!/^\s*[-+]?[0-9]+\s*$/.test(n)) return { error: `Illegal number: ${n}` };
  const a = BigInt(left.trim());
  const b = BigInt(right.trim());
  const holds = { '-eq': a === b, '-ne': a !== b, '-lt': a < b, '-gt': a > b, '-le': a <= b, '-ge': a >= b }[op];
  return holds ? 0 : 1;
}
