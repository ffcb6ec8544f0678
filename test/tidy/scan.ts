/**
 * The scanner behind `test/tidy.test.ts`: pure functions over source text and
 * import graphs, with no file system, so that every rule can be shown to fail
 * on a synthetic input.
 *
 * Files are named by their path inside `src/`, with `/` separators
 * (`core/master/master.ts`); messages print them as `src/...`.
 */
import { posix } from 'node:path';

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export function report(findings: readonly Finding[]): string {
  return findings.map((f) => `src/${f.file}:${f.line}: ${f.message}`).join('\n');
}

// ---- lexing ----

export interface Stripped {
  /** Comments blanked; strings kept (import specifiers live in strings). */
  readonly noComments: string;
  /** Comments, string, template and regex contents blanked; delimiters kept. */
  readonly codeOnly: string;
}

const REGEX_AFTER = new Set([
  '(',
  ',',
  '=',
  ':',
  '[',
  '!',
  '&',
  '|',
  '?',
  '{',
  '}',
  ';',
  '+',
  '-',
  '*',
  '%',
  '<',
  '>',
  '~',
  '^',
]);
const REGEX_AFTER_WORD = /\b(?:return|typeof|case|in|of|void|delete|throw|new|yield|await|else|do)$/;

/**
 * A small JavaScript lexer: enough to tell code from comments, strings and
 * regexes. Both outputs keep every UTF-16 unit's position, so an index found
 * in one is valid in the other and in the original text.
 */
export function strip(text: string): Stripped {
  const keep = text.split('');
  const code = text.split('');
  const blank = (arr: string[], i: number) => {
    if (arr[i] !== '\n') arr[i] = ' ';
  };
  // Brace depth of each open template expression `${ ... }`.
  const templates: number[] = [];
  let i = 0;
  let lastSignificant = '';
  const enterTemplate = (): void => {
    // At a backtick or a closing `}` of an expression: scan template text.
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\\') {
        blank(code, i);
        blank(code, ++i);
      } else if (c === '`') {
        lastSignificant = '`';
        i++;
        return;
      } else if (c === '$' && text[i + 1] === '{') {
        templates.push(0);
        i += 2;
        lastSignificant = '{';
        return;
      } else blank(code, i);
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      for (; i < text.length && text[i] !== '\n'; i++) {
        blank(keep, i);
        blank(code, i);
      }
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (; i < stop; i++) {
        blank(keep, i);
        blank(code, i);
      }
    } else if (c === "'" || c === '"') {
      for (i++; i < text.length && text[i] !== c && text[i] !== '\n'; i++) {
        if (text[i] === '\\') blank(code, i++);
        blank(code, i);
      }
      i++;
      lastSignificant = c;
    } else if (c === '`') {
      i++;
      enterTemplate();
    } else if (c === '}' && templates.length > 0 && templates[templates.length - 1] === 0) {
      templates.pop();
      i++;
      enterTemplate();
    } else if (c === '/' && startsRegex(text, i, lastSignificant)) {
      let inClass = false;
      for (i++; i < text.length && text[i] !== '\n'; i++) {
        const d = text[i]!;
        if (d === '\\') {
          blank(code, i++);
        } else if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
        blank(code, i);
      }
      i++;
      lastSignificant = '/';
    } else {
      if (templates.length > 0) {
        if (c === '{') templates[templates.length - 1]!++;
        else if (c === '}') templates[templates.length - 1]!--;
      }
      if (!/\s/.test(c)) lastSignificant = c;
      i++;
    }
  }
  return { noComments: keep.join(''), codeOnly: code.join('') };
}

function startsRegex(text: string, at: number, lastSignificant: string): boolean {
  if (lastSignificant === '' || REGEX_AFTER.has(lastSignificant)) return true;
  const before = text.slice(Math.max(0, at - 12), at).trimEnd();
  return REGEX_AFTER_WORD.test(before);
}

/** Line numbers by binary search over line starts: scans ask for many. */
function lineIndex(text: string): (index: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return (index) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

// ---- imports ----

export interface ImportRef {
  /** Undefined for a dynamic import whose specifier is computed. */
  readonly specifier: string | undefined;
  readonly line: number;
}

// Sticky patterns tried right after an `import` or `export` keyword found in
// code; each ends at the opening quote of the specifier.
const STATIC_IMPORT = /\s*(?:(?:type\s+)?(?:[\w$]+\s*(?:,\s*)?)?(?:\*\s*as\s+[\w$]+\s*|\{[^}]*\}\s*)?from\s*)?(['"])/y;
const RE_EXPORT = /\s*(?:type\s+)?(?:\*\s*(?:as\s+[\w$]+\s*)?|\{[^}]*\}\s*)from\s*(['"])/y;
const DYNAMIC_IMPORT = /\s*\(\s*/y;
const LITERAL_END = /\s*[,)]/y;

/**
 * Every import of a file: static, `import type`, side-effect, `export ... from`,
 * dynamic and `import('...')` types. Keywords are found in code only, so an
 * `import` or `from` inside a string or comment is not one.
 */
export function importsOf(text: string): ImportRef[] {
  const { noComments, codeOnly } = strip(text);
  const lineOf = lineIndex(text);
  const refs: ImportRef[] = [];
  const at = (pattern: RegExp, index: number): RegExpExecArray | null => {
    pattern.lastIndex = index;
    return pattern.exec(codeOnly);
  };
  const literal = (quote: number): { specifier: string; end: number } => {
    const end = noComments.indexOf(noComments[quote]!, quote + 1);
    return { specifier: noComments.slice(quote + 1, end), end };
  };
  for (const m of codeOnly.matchAll(/(?<![\w$.#])(import|export)(?![\w$])/g)) {
    const after = m.index + m[0].length;
    const line = lineOf(m.index);
    const dynamic = m[1] === 'import' ? at(DYNAMIC_IMPORT, after) : null;
    if (dynamic) {
      const open = after + dynamic[0].length;
      const quoted = codeOnly[open] === "'" || codeOnly[open] === '"';
      const found = quoted ? literal(open) : undefined;
      const whole = found !== undefined && at(LITERAL_END, found.end + 1) !== null;
      refs.push({ specifier: whole ? found.specifier : undefined, line });
      continue;
    }
    const decl = at(m[1] === 'import' ? STATIC_IMPORT : RE_EXPORT, after);
    if (decl) refs.push({ specifier: literal(after + decl[0].length - 1).specifier, line });
  }
  return refs;
}

const isRelative = (specifier: string): boolean => specifier.startsWith('./') || specifier.startsWith('../');

/** Where a relative specifier points, as a path inside src (`../x` when it leaves src). */
function target(file: string, specifier: string): string {
  return posix.normalize(posix.join(posix.dirname(file), specifier));
}

/**
 * The file a relative specifier names among `files`: `./x.js` is `x.ts` (or
 * `x.tsx`, `x.js`), an extensionless path may be a file or a folder's index.
 */
export function resolveImport(file: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const base = target(file, specifier);
  const stem = base.replace(/\.[mc]?js$/, '');
  const candidates =
    stem === base
      ? [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]
      : [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, base];
  return candidates.find((c) => files.has(c));
}

// ---- rule: the core is closed and deterministic ----

/**
 * Globals the core must not name, in any use: the wall clock, randomness
 * sources, host timers and the event loop, the process and the host itself
 * (including the ways to reach it indirectly: `globalThis`, `eval`,
 * `Function`, `require`), and the host's locale.
 */
const CORE_BANNED_GLOBALS = [
  'Date',
  'performance',
  'crypto',
  'globalThis',
  'global',
  'process',
  'require',
  'eval',
  'Function',
  '__dirname',
  '__filename',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'clearImmediate',
  'queueMicrotask',
  'Promise',
  'async',
  'await',
  'structuredClone',
  'WeakRef',
  'FinalizationRegistry',
  'Buffer',
  'fetch',
  'console',
  'Intl',
];

// A name used as a global: not a member (`x.Date`, `x?.Date`; a spread
// `...Date` is a use) and not part of a longer name or a `#private` name.
const AS_GLOBAL = String.raw`(?<![\w$#])(?<![^.]\.\s*)`;
const GLOBAL_USE = new RegExp(`${AS_GLOBAL}(${CORE_BANNED_GLOBALS.join('|')})(?![\\w$])`, 'g');
const MATH_USE = new RegExp(`${AS_GLOBAL}Math(?![\\w$])`, 'g');
const MEMBER = /\s*\??\.\s*([\w$]+)/y;
const MATH_COMPUTED = /\s*(?:\?\.)?\s*\[/y;

/** Member calls that reach a banned facility whatever the object is. */
const CORE_BANNED_CALLS: readonly (readonly [RegExp, string])[] = [
  [/\.\s*then\s*\(/g, '.then( (a promise)'],
  [/\.\s*constructor\s*\(/g, '.constructor( (can reach Function)'],
  [/\.\s*(localeCompare|toLocale\w*)\s*\(/g, 'the host locale'],
  [/(?<![\w$.])import\s*\.\s*meta\b/g, 'import.meta'],
];

const KEY_MODIFIERS = new Set([
  'readonly',
  'public',
  'private',
  'protected',
  'static',
  'declare',
  'override',
  'abstract',
]);

/**
 * Whether the name at `start..end` is a property key (`{ process: string }`,
 * `readonly Date?: number`) rather than a value: followed by `:` or `?:` and
 * preceded by `{`, `,`, `;` or a line break after a complete member. A
 * ternary's `? Date :` stays a use.
 */
function isPropertyKey(code: string, start: number, end: number): boolean {
  if (!/^\s*\??\s*:(?!:)/.test(code.slice(end, end + 40))) return false;
  let from = start;
  for (;;) {
    let j = from - 1;
    while (j >= 0 && /\s/.test(code[j]!)) j--;
    const word = /[\w$]+$/.exec(code.slice(Math.max(0, j - 20), j + 1))?.[0];
    if (word !== undefined && KEY_MODIFIERS.has(word)) {
      from = j + 1 - word.length;
      continue;
    }
    const prev = code[j];
    if (prev === undefined || '{,;'.includes(prev)) return true;
    return code.slice(j + 1, from).includes('\n') && /[\w$)\]}'"`>]/.test(prev);
  }
}

/** Imports from outside the core, and uses of the wall clock, randomness and host facilities. */
export function scanCore(file: string, text: string): Finding[] {
  const { codeOnly } = strip(text);
  const lineOf = lineIndex(text);
  const findings: Finding[] = [];
  const add = (index: number, message: string) => findings.push({ file, line: lineOf(index), message });
  for (const { specifier, line } of importsOf(text)) {
    if (specifier === undefined) findings.push({ file, line, message: 'dynamic import with a computed specifier' });
    else if (!insideCore(file, specifier))
      findings.push({ file, line, message: `imports '${specifier}' from outside src/core` });
  }
  for (const m of codeOnly.matchAll(GLOBAL_USE)) {
    const end = m.index + m[0].length;
    if (isPropertyKey(codeOnly, m.index, end)) continue;
    const member = m[1] === 'globalThis' || m[1] === 'global' ? sticky(MEMBER, codeOnly, end)?.[1] : undefined;
    add(m.index, `uses ${m[1]}${member === undefined ? '' : `.${member}`}`);
  }
  for (const m of codeOnly.matchAll(MATH_USE)) {
    const end = m.index + m[0].length;
    if (isPropertyKey(codeOnly, m.index, end)) continue;
    const member = sticky(MEMBER, codeOnly, end)?.[1];
    if (member === 'random') add(m.index, 'uses Math.random');
    else if (sticky(MATH_COMPUTED, codeOnly, end)) add(m.index, 'computed access on Math (can reach Math.random)');
    else if (member === undefined) add(m.index, 'uses Math as a value (can reach Math.random)');
  }
  for (const [pattern, name] of CORE_BANNED_CALLS) {
    for (const m of codeOnly.matchAll(pattern)) add(m.index, `uses ${name}`);
  }
  return findings.sort((a, b) => a.line - b.line);
}

function sticky(pattern: RegExp, text: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(text);
}

function insideCore(file: string, specifier: string): boolean {
  if (!isRelative(specifier)) return false;
  const to = target(file, specifier);
  return to.startsWith('core/');
}

// ---- rule: floors, and no circle ----

export interface Room {
  /** Files of one room may import each other; other rooms of a floor may not. */
  readonly name: string;
  readonly floor: number;
}

export type Rooms = readonly (readonly [RegExp, Room])[];

/** The picture of docs/architecture.md, "Layers". */
export const ROOMS: Rooms = [
  [/^(?:cli\/|start\/|index\.ts$)/, { name: 'composition root', floor: 5 }],
  [/^scenario\//, { name: 'scenario', floor: 4 }],
  [/^frameworks\//, { name: 'frameworks', floor: 4 }],
  [/^http\//, { name: 'http', floor: 3 }],
  [/^runtime\//, { name: 'runtime', floor: 2 }],
  [/^client\//, { name: 'client', floor: 2 }],
  [/^wire\//, { name: 'wire', floor: 1 }],
  [/^core\//, { name: 'core', floor: 0 }],
];

/**
 * The core's own picture: the port at its root on top, the nodes below it,
 * and under them the pieces every node is made of. Its files import files
 * of their own room and of lower floors only, as the rooms of src/ do.
 */
export const CORE_ROOMS: Rooms = [
  [/^core\/[^/]+$/, { name: 'core: the port', floor: 6 }],
  [/^core\/faults\//, { name: 'core/faults', floor: 5 }],
  [/^core\/master\//, { name: 'core/master', floor: 4 }],
  [/^core\/agent\//, { name: 'core/agent', floor: 4 }],
  [/^core\/allocator\//, { name: 'core/allocator', floor: 3 }],
  [/^core\/network\//, { name: 'core/network', floor: 2 }],
  [/^core\/process\//, { name: 'core/process', floor: 2 }],
  [/^core\/model\//, { name: 'core/model', floor: 1 }],
  [/^core\/kernel\//, { name: 'core/kernel', floor: 0 }],
];

export function roomOf(file: string, rooms: Rooms = ROOMS): Room | undefined {
  return rooms.find(([pattern]) => pattern.test(file))?.[1];
}

/** A file's imports by specifier, as written (bare and `node:` ones included). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/**
 * http/'s picture: what the servers share at its root, and the servers on
 * it, siblings that borrow nothing from each other.
 */
export const HTTP_ROOMS: Rooms = [
  [/^http\/[^/]+$/, { name: 'http: shared', floor: 0 }],
  [/^http\/master\//, { name: 'http/master', floor: 1 }],
  [/^http\/agent\//, { name: 'http/agent', floor: 1 }],
  [/^http\/engine\//, { name: 'http/engine', floor: 1 }],
  [/^http\/sim\//, { name: 'http/sim', floor: 1 }],
];

/** The floors inside one room of src/ (`core/`, `http/`), for imports between its files only. */
function innerViolations(graph: ImportGraph, room: string, rooms: Rooms): string[] {
  const inside = (file: string, specifier: string): boolean =>
    isRelative(specifier) && target(file, specifier).startsWith(room);
  const files = new Map(
    [...graph]
      .filter(([file]) => file.startsWith(room))
      .map(([file, specifiers]) => [file, specifiers.filter((s) => inside(file, s))] as const),
  );
  return layerViolations(files, rooms);
}

/** The floors inside src/core/ (imports leaving it are the core rule's business). */
export const coreLayerViolations = (graph: ImportGraph): string[] => innerViolations(graph, 'core/', CORE_ROOMS);

/** The floors inside src/http/: the four servers over what they share. */
export const httpLayerViolations = (graph: ImportGraph): string[] => innerViolations(graph, 'http/', HTTP_ROOMS);

/**
 * Imports that run upwards or sideways, as `src/a.ts -> ../x/b.js (floor 2 ->
 * floor 3)`; also files on no floor and imports leaving src. Only relative
 * imports join files of src; packages are the core rule's business.
 */
export function layerViolations(graph: ImportGraph, rooms: Rooms = ROOMS): string[] {
  const files = new Set(graph.keys());
  const out: string[] = [];
  for (const file of [...files].sort()) {
    const from = roomOf(file, rooms);
    if (from === undefined) {
      out.push(`src/${file} is on no floor of the picture`);
      continue;
    }
    for (const specifier of graph.get(file)!) {
      if (!isRelative(specifier)) continue;
      const to = resolveImport(file, specifier, files) ?? target(file, specifier).replace(/\.[mc]?js$/, '.ts');
      const room = to.startsWith('../') ? undefined : roomOf(to, rooms);
      const where = to.startsWith('../') ? 'outside src' : room === undefined ? 'no floor' : `floor ${room.floor}`;
      if (room !== undefined && (room.name === from.name || room.floor < from.floor)) continue;
      out.push(`src/${file} -> ${specifier} (floor ${from.floor} -> ${where})`);
    }
  }
  return out;
}

/**
 * Circles among the files of the graph, as `src/a.ts -> src/b.ts -> src/a.ts`.
 * A depth-first walk in file order reports the circle each back edge closes;
 * breaking every reported circle leaves the graph without one.
 */
export function importCycles(graph: ImportGraph): string[] {
  const files = new Set(graph.keys());
  const edges = new Map<string, string[]>();
  for (const [file, specifiers] of graph) {
    const targets = specifiers.filter(isRelative).map((s) => resolveImport(file, s, files));
    edges.set(file, [...new Set(targets.filter((t) => t !== undefined))].sort());
  }
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file)!) {
      const seen = state.get(next);
      if (seen === 'open') cycles.push([...path.slice(path.indexOf(next)), next].map((f) => `src/${f}`).join(' -> '));
      else if (seen === undefined) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...files].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

// ---- rule: size ----

const CONTROL = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'return',
  'function',
  'new',
  'await',
  'typeof',
  'super',
  'this',
  'throw',
  'else',
  'do',
  'try',
  'with',
  'yield',
  'delete',
  'void',
  'import',
  'export',
  'case',
]);
const FUNCTION_HEAD = /\bfunction\b\s*\*?\s*[\w$]*\s*(?:<[^(]*>)?\s*\(/g;
const METHOD_HEAD =
  /^[ \t]*(?:(?:public|private|protected|static|async|override|readonly|get|set|abstract|export|default)\s+)*\*?\s*(#?[\w$]+)\s*(?:<[^(]*>)?\s*\(/gm;
const ARROW_BODY = /=>\s*\{/g;

/** Functions longer than `max` lines: a brace-matching heuristic. */
export function scanFunctionLengths(file: string, text: string, max: number): Finding[] {
  const { codeOnly } = strip(text);
  const lineOf = lineIndex(codeOnly);
  const bodies = new Map<number, number>(); // body `{` index -> head index
  for (const m of codeOnly.matchAll(FUNCTION_HEAD)) {
    const body = bodyAfterParams(codeOnly, m.index + m[0].length - 1);
    if (body !== undefined) bodies.set(body, m.index);
  }
  for (const m of codeOnly.matchAll(METHOD_HEAD)) {
    if (CONTROL.has(m[1]!)) continue;
    const body = bodyAfterParams(codeOnly, m.index + m[0].length - 1);
    if (body !== undefined && !bodies.has(body)) bodies.set(body, m.index + m[0].indexOf(m[1]!));
  }
  for (const m of codeOnly.matchAll(ARROW_BODY)) {
    const body = m.index + m[0].length - 1;
    if (!bodies.has(body)) bodies.set(body, arrowHead(codeOnly, m.index));
  }
  const findings: Finding[] = [];
  for (const [body, head] of bodies) {
    const close = matching(codeOnly, body, '{', '}');
    if (close === undefined) continue;
    const first = lineOf(head);
    const lines = lineOf(close) - first + 1;
    if (lines > max) findings.push({ file, line: first, message: `function of ${lines} lines (at most ${max})` });
  }
  return findings.sort((a, b) => a.line - b.line);
}

/** Index of the bracket closing the one at `open`, if any. */
function matching(code: string, open: number, o: string, c: string): number | undefined {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === o) depth++;
    else if (code[i] === c && --depth === 0) return i;
  }
  return undefined;
}

const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}', '<': '>' };

/**
 * From the `(` of a parameter list: the index of the body's `{`, skipping a
 * return type annotation; undefined for calls and declarations without body.
 */
function bodyAfterParams(code: string, paren: number): number | undefined {
  const close = matching(code, paren, '(', ')');
  if (close === undefined) return undefined;
  let i = skipSpace(code, close + 1);
  if (code[i] === '{') return i;
  if (code[i] !== ':') return undefined;
  // A return type: a type starts after `:`, `|`, `&`, `=>`, `,`; once one is
  // complete, a `{` opens the body rather than an object type.
  let expectType = true;
  for (i = skipSpace(code, i + 1); i < code.length; i = skipSpace(code, i)) {
    const ch = code[i]!;
    if (ch === '{' && !expectType) return i;
    const closer = OPENERS[ch];
    if (closer !== undefined) {
      const end = matching(code, i, ch, closer);
      if (end === undefined) return undefined;
      i = end + 1;
      expectType = false;
    } else if (code.startsWith('=>', i)) {
      i += 2;
      expectType = true;
    } else if (ch === '|' || ch === '&' || ch === ',') {
      i++;
      expectType = true;
    } else if (/[\w$.'"`]/.test(ch)) {
      while (i < code.length && /[\w$.'"`]/.test(code[i]!)) i++;
      expectType = false;
    } else return undefined;
  }
  return undefined;
}

function skipSpace(code: string, i: number): number {
  while (i < code.length && /\s/.test(code[i]!)) i++;
  return i;
}

/** Where an arrow function starts: its parameter list when parenthesised. */
function arrowHead(code: string, arrow: number): number {
  let i = arrow - 1;
  while (i > 0 && /\s/.test(code[i]!)) i--;
  if (code[i] !== ')') return arrow;
  let depth = 0;
  for (; i >= 0; i--) {
    if (code[i] === ')') depth++;
    else if (code[i] === '(' && --depth === 0) return i;
  }
  return arrow;
}

/** A file longer than `max` lines, reported at its first line over the limit. */
export function scanFileLength(file: string, text: string, max: number): Finding[] {
  const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  return lines > max ? [{ file, line: max + 1, message: `file of ${lines} lines (at most ${max})` }] : [];
}

// ---- rule: docs/architecture.md stays true ----

/** The text of a markdown section, from its `## heading` line to the next `## ` (empty when none). */
export function markdownSection(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${heading}`);
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The folders (`core/kernel`) that a codemap names nowhere as `` `core/kernel/` `` or `` `src/core/kernel/` ``. */
export function unnamedFolders(folders: readonly string[], codemap: string): string[] {
  return folders.filter((f) => !codemap.includes(`\`${f}/\``) && !codemap.includes(`\`src/${f}/\``));
}

/**
 * The pictures of the floors: src/'s own, and those inside a room of it,
 * by the room's folder. A path of a floors table belongs to the picture
 * of the folder it lies within (`core/kernel/` to the core's), else to
 * src/'s (`core/`, `index.ts`).
 */
export const PICTURES: ReadonlyMap<string, Rooms> = new Map([
  ['', ROOMS],
  ['core/', CORE_ROOMS],
  ['http/', HTTP_ROOMS],
]);

/**
 * Where the floors tables of a document disagree with the pictures. A row
 * of a table is `| floor | rooms | ... |`, its rooms' paths in backticks
 * (`cli/`, `core/*.ts`, `index.ts`); every path must be on that floor of its
 * picture, and every room of every picture must be in some row.
 */
export function floorTableMismatches(layers: string, pictures: ReadonlyMap<string, Rooms> = PICTURES): string[] {
  const out: string[] = [];
  const covered = new Set<Room>();
  for (const line of layers.split('\n')) {
    const cells = line.trim().startsWith('|')
      ? line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim())
      : [];
    if (cells.length < 2 || !/^\d+$/.test(cells[0]!)) continue;
    const floor = Number(cells[0]);
    for (const [, path] of cells[1]!.matchAll(/`([^`]+)`/g)) {
      const folder = [...pictures.keys()].find((k) => k !== '' && path!.startsWith(k) && path!.length > k.length) ?? '';
      const room = roomOf(path!.endsWith('/') ? `${path}x.ts` : path!.replace('*', 'x'), pictures.get(folder)!);
      if (room === undefined) out.push(`\`${path}\` is in no room of src/${folder}'s picture`);
      else if (room.floor !== floor)
        out.push(`\`${path}\` is on floor ${room.floor} of src/${folder}, the table says ${floor}`);
      else covered.add(room);
    }
  }
  for (const [folder, rooms] of pictures) {
    for (const [, room] of rooms) {
      if (!covered.has(room)) out.push(`room '${room.name}' (floor ${room.floor} of src/${folder}) is in no row`);
    }
  }
  return out;
}
