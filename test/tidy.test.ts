/**
 * Tidy: the rules of the design that a compiler does not check.
 *
 *   - `src/core/` imports nothing outside `src/core/` (no packages, no `node:*`)
 *   - `src/core/` uses no wall clock, no ambient randomness, no host timers
 *     and no process globals
 *   - no function in `src/` is longer than 100 lines (generated code aside)
 *
 * The scanner works on the text with comments blanked out (and, for brace
 * matching, with string and regex contents blanked too), keeping every
 * newline so that findings point at the right line.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const CORE = join(SRC, 'core');
const GENERATED = join(SRC, 'wire', 'generated');
const MAX_FUNCTION_LINES = 100;

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

const BANNED: readonly (readonly [RegExp, string])[] = [
  [/\bDate\.now\b/g, 'Date.now'],
  [/\bnew\s+Date\s*\(/g, 'new Date('],
  [/\bMath\.random\b/g, 'Math.random'],
  [/\bsetTimeout\b/g, 'setTimeout'],
  [/\bsetInterval\b/g, 'setInterval'],
  [/\bsetImmediate\b/g, 'setImmediate'],
  [/\bqueueMicrotask\b/g, 'queueMicrotask'],
  [/(?<![\w$.])process\./g, 'process.'],
  [/(?<![\w$.])performance\./g, 'performance.'],
  [/(?<![\w$.])require\s*\(/g, 'require('],
];

// ---- lexing ----

interface Stripped {
  /** Comments blanked; strings kept (import specifiers live in strings). */
  readonly noComments: string;
  /** Comments, string, template and regex contents blanked; delimiters kept. */
  readonly codeOnly: string;
}

const REGEX_AFTER = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^']);
const REGEX_AFTER_WORD = /\b(?:return|typeof|case|in|of|void|delete|throw|new|yield|await|else|do)$/;

/** A small JavaScript lexer: enough to tell code from comments, strings and regexes. */
export function strip(text: string): Stripped {
  const keep = [...text];
  const code = [...text];
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

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

// ---- rules ----

/** Imports and banned APIs of a file of the core. */
export function scanCore(file: string, text: string): Finding[] {
  const { noComments } = strip(text);
  const findings: Finding[] = [];
  const specifiers = [
    /\bfrom\s*(['"])([^'"]*)\1/g,
    /\bimport\s*(['"])([^'"]*)\1/g,
    /\bimport\s*\(\s*(['"])([^'"]*)\1\s*\)/g,
  ];
  for (const pattern of specifiers) {
    for (const m of noComments.matchAll(pattern)) {
      const specifier = m[2]!;
      if (!insideCore(file, specifier)) {
        findings.push({ file, line: lineAt(noComments, m.index), message: `imports '${specifier}' from outside src/core` });
      }
    }
  }
  for (const m of noComments.matchAll(/\bimport\s*\(\s*(?!['"])/g)) {
    findings.push({ file, line: lineAt(noComments, m.index), message: 'dynamic import with a computed specifier' });
  }
  for (const [pattern, name] of BANNED) {
    for (const m of noComments.matchAll(pattern)) {
      findings.push({ file, line: lineAt(noComments, m.index), message: `uses ${name}` });
    }
  }
  return findings.sort((a, b) => a.line - b.line);
}

function insideCore(file: string, specifier: string): boolean {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return false;
  const target = resolve(dirname(file), specifier);
  return target === CORE || target.startsWith(CORE + sep);
}

const CONTROL = new Set([
  'if', 'for', 'while', 'switch', 'catch', 'return', 'function', 'new', 'await', 'typeof', 'super',
  'this', 'throw', 'else', 'do', 'try', 'with', 'yield', 'delete', 'void', 'import', 'export', 'case',
]);
const FUNCTION_HEAD = /\bfunction\b\s*\*?\s*[\w$]*\s*(?:<[^(]*>)?\s*\(/g;
const METHOD_HEAD =
  /^[ \t]*(?:(?:public|private|protected|static|async|override|readonly|get|set|abstract|export|default)\s+)*\*?\s*(#?[\w$]+)\s*(?:<[^(]*>)?\s*\(/gm;
const ARROW_BODY = /=>\s*\{/g;

/** Functions longer than `max` lines: a brace-matching heuristic. */
export function scanFunctionLengths(file: string, text: string, max = MAX_FUNCTION_LINES): Finding[] {
  const { codeOnly } = strip(text);
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
    const first = lineAt(codeOnly, head);
    const lines = lineAt(codeOnly, close) - first + 1;
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

// ---- files ----

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(?:ts|tsx|js|mjs|cjs)$/.test(name)) out.push(path);
  }
  return out;
}

function report(findings: readonly Finding[]): string {
  return findings.map((f) => `${relative(ROOT, f.file)}:${f.line}: ${f.message}`).join('\n');
}

describe('tidy', () => {
  it('the scanner finds what it is meant to find', () => {
    const file = join(CORE, 'example.ts');
    const text = [
      "import fs from 'node:fs';",
      "import { add } from './resources.js';",
      '// Math.random() in a comment is fine',
      '/* so is setTimeout( in a block comment */',
      "const pattern = /[/'\"]+/u; // a regex with quotes and slashes",
      'export const x = Math.random();',
    ].join('\n');
    const findings = scanCore(file, text);
    expect(report(findings)).toBe(
      ["src/core/example.ts:1: imports 'node:fs' from outside src/core", 'src/core/example.ts:6: uses Math.random'].join('\n'),
    );
    expect(scanCore(file, "export { x } from '../http/app.js';\nconst m = await import('fastify');")).toHaveLength(2);
  });

  it('the length heuristic measures functions, methods and arrows', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function long(a: number): { ok: boolean } {\n${body(100)}\n  return { ok: true };\n}`,
      `class C {\n  method(\n    a: string,\n  ): void {\n${body(98)}\n  }\n}`,
      `const arrow = (x: number) => {\n${body(101)}\n};`,
      `function short() {\n${body(3)}\n}`,
      'call(a, () => 1);',
    ].join('\n');
    const findings = scanFunctionLengths('src/example.ts', text);
    expect(findings.map((f) => [f.line, f.message])).toEqual([
      [1, 'function of 103 lines (at most 100)'],
      [105, 'function of 102 lines (at most 100)'],
      [208, 'function of 103 lines (at most 100)'],
    ]);
  });

  it('src/core imports only src/core and uses no ambient time, randomness, timers or process', () => {
    const findings = sourceFiles(CORE).flatMap((file) => scanCore(file, readFileSync(file, 'utf8')));
    expect(findings, report(findings)).toEqual([]);
  });

  it(`no function in src/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const files = sourceFiles(SRC).filter((f) => f !== GENERATED && !f.startsWith(GENERATED + sep));
    const findings = files.flatMap((file) => scanFunctionLengths(file, readFileSync(file, 'utf8')));
    expect(findings, report(findings)).toEqual([]);
  });
});
