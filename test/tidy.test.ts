/**
 * Tidy: the rules of the design that a compiler does not check.
 *
 *   1. `src/core/` is closed and deterministic. It imports only files of
 *      `src/core/`: no package, no `node:*`, no path leaving the core, no
 *      dynamic import with a computed specifier. It names, in any spelling,
 *      no wall clock (`Date`, `performance`), no randomness (`Math.random`,
 *      `Math[...]`, `Math` as a value, `crypto`), no host timer or microtask
 *      (`setTimeout`, `setInterval`, `setImmediate`, `queueMicrotask` and
 *      their `clear*`), no promise (`Promise`, `async`, `await`, `.then(`),
 *      no way to the host (`globalThis`, `global`, `process`, `require`,
 *      `eval`, `Function`, `.constructor(`, `import.meta`, `Buffer`,
 *      `console`, `fetch`, `__dirname`, `__filename`), no `structuredClone`,
 *      `WeakRef` or `FinalizationRegistry`, and not the host locale (`Intl`,
 *      `localeCompare`, `toLocale*`). A property key such as
 *      `{ process: string }` and a member such as `event.dateMs` are not uses
 *   2. Imports follow the floors of docs/architecture.md ("Layers") and
 *      never form a circle:
 *
 *        floor 5  cli/, start/, index.ts  the composition root, one room
 *        floor 4  scenario/ | frameworks/
 *        floor 3  http/
 *        floor 2  runtime/ | client/
 *        floor 1  wire/
 *        floor 0  core/
 *
 *      A file may import (`import`, `import type`, `export ... from`, dynamic
 *      `import()`) files of its own room and of lower floors only. Rooms that
 *      share a floor are siblings and import nothing of each other: runtime
 *      and client, scenario and frameworks. Every file of `src/` is on a
 *      floor, and no relative import leaves `src/`. No import circle among
 *      the files of `src/`, type-only imports included. Inside the core the
 *      same rule holds between its rooms:
 *
 *        floor 6  core/*.ts        the port: Cluster, its options, the view,
 *                                  conditions, invariants, the input record
 *        floor 5  core/faults/
 *        floor 4  core/master/ | core/agent/
 *        floor 3  core/allocator/
 *        floor 2  core/network/ | core/process/
 *        floor 1  core/model/
 *        floor 0  core/kernel/
 *
 *      and inside http/: the master, agent, engine and sim servers
 *      (http/master/, …) import what they share at http/'s root and
 *      nothing of each other
 *   3. No function in `src/` is longer than 70 lines
 *   4. No file in `src/` is longer than 500 lines, but those of a list that
 *      were longer when the rule came: each may only shrink
 *   5. docs/architecture.md stays true: its codemap names every folder of
 *      `src/`, and its floors tables list the rooms of the pictures of 2,
 *      each on its floor
 *
 * Generated code (`src/wire/generated/`) is exempt from 3 and 4. The scanner
 * (`tidy/scan.ts`) reads names in the text with comments, strings, templates
 * and regexes blanked, keeping every newline so that findings point at the
 * right line. Every rule also runs on synthetic text or a synthetic graph
 * that breaks it, so a scanner that quietly stops matching fails too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  coreLayerViolations,
  floorTableMismatches,
  httpLayerViolations,
  importCycles,
  importsOf,
  layerViolations,
  markdownSection,
  report,
  scanCore,
  scanFileLength,
  scanFunctionLengths,
  unnamedFolders,
  type ImportGraph,
} from './tidy/scan.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');
const MAX_FUNCTION_LINES = 70;
const MAX_FILE_LINES = 500;
/**
 * Files that were longer than the rule when it came, each held to the length
 * it had: they may only shrink, and leave the list once they fit.
 */
const SHRINKING: ReadonlyMap<string, number> = new Map([]);

/** Source files of src/, by their path inside src/ with `/` separators. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(?:[mc]?ts|tsx|[mc]?js)$/.test(name)) out.push(relative(SRC, path).split(sep).join('/'));
  }
  return out;
}

const SOURCES: ReadonlyMap<string, string> = new Map(
  sourceFiles(SRC).map((f) => [f, readFileSync(join(SRC, f), 'utf8')]),
);
const HANDWRITTEN = [...SOURCES.keys()].filter((f) => !f.startsWith('wire/generated/'));
const IMPORTS: ImportGraph = new Map(
  [...SOURCES].map(([file, text]) => [file, importsOf(text).flatMap((ref) => ref.specifier ?? [])]),
);

const lines = (...rows: string[]): string => rows.join('\n');

describe('tidy: the core is closed and deterministic', () => {
  it('catches every spelling of a banned facility or import, one finding per line', () => {
    const bad: readonly (readonly [string, string])[] = [
      ['const a = Date.now();', 'uses Date'],
      ['const b = new Date(0);', 'uses Date'],
      ['const c = Date();', 'uses Date'],
      ['const D = Date;', 'uses Date'],
      ['const when = ready ? Date : undefined;', 'uses Date'],
      ['const e = globalThis.Date.now();', 'uses globalThis.Date'],
      ['const f = crypto.randomUUID();', 'uses crypto'],
      ['const g = globalThis.crypto;', 'uses globalThis.crypto'],
      ["import { randomUUID } from 'node:crypto';", "imports 'node:crypto' from outside src/core"],
      ['const h = process.env.SEED;', 'uses process'],
      ['const i = globalThis.process;', 'uses globalThis.process'],
      ['const p = process;', 'uses process'],
      ['const argv = [...process.argv];', 'uses process'],
      ["const g2 = globalThis['process'];", 'uses globalThis'],
      ['global.setTimeout(run, 1);', 'uses global.setTimeout'],
      ['const j = Math.random();', 'uses Math.random'],
      ['const j2 = Math?.random();', 'uses Math.random'],
      ["const k = Math['random']();", 'computed access on Math (can reach Math.random)'],
      ['const l = Math["random"]();', 'computed access on Math (can reach Math.random)'],
      ['const m = Math[key]();', 'computed access on Math (can reach Math.random)'],
      ['const { random } = Math;', 'uses Math as a value (can reach Math.random)'],
      ['setTimeout(run, 1);', 'uses setTimeout'],
      ['setInterval(run, 1);', 'uses setInterval'],
      ['setImmediate(run);', 'uses setImmediate'],
      ['clearTimeout(timer);', 'uses clearTimeout'],
      ['queueMicrotask(run);', 'uses queueMicrotask'],
      ['const n = performance.now();', 'uses performance'],
      ['const o = structuredClone(x);', 'uses structuredClone'],
      ['const q = new WeakRef(x);', 'uses WeakRef'],
      ['const r = new FinalizationRegistry(run);', 'uses FinalizationRegistry'],
      ['const s = async () => 1;', 'uses async'],
      ['const t = await u;', 'uses await'],
      ['let v: Promise<void> | undefined;', 'uses Promise'],
      ['x.then(run);', 'uses .then( (a promise)'],
      ["const y = require('./rng.js');", 'uses require'],
      ["eval('1');", 'uses eval'],
      ["const z = new Function('return 1');", 'uses Function'],
      ["const z2 = (() => 0).constructor('return this')();", 'uses .constructor( (can reach Function)'],
      ['const url = import.meta.url;', 'uses import.meta'],
      ['console.log(x);', 'uses console'],
      ['const loc = a.localeCompare(b);', 'uses the host locale'],
      ["import fastify from 'fastify';", "imports 'fastify' from outside src/core"],
      ["export { x } from '../http/app.js';", "imports '../http/app.js' from outside src/core"],
      ["import type { T } from '../wire/types.js';", "imports '../wire/types.js' from outside src/core"],
      ["import './setup.js'; import '../../test/helpers.js';", "imports '../../test/helpers.js' from outside src/core"],
      ["import('./agent/' + name);", 'dynamic import with a computed specifier'],
    ];
    const findings = scanCore('core/example.ts', lines(...bad.map(([text]) => text)));
    expect(findings.map((f) => [f.line, f.message])).toEqual(bad.map(([, message], i) => [i + 1, message]));
  });

  it('leaves legitimate core code alone', () => {
    const good = lines(
      "import { add } from './resources.js';",
      "import type { Agent } from './agent/agent.js';",
      "export { Master } from './master/master.js';",
      "const later = await_ + import_('x');",
      'const updateRate = 1;',
      'const t = event.dateMs + record.processedAt + x.setTimeout + y?.process;',
      'interface Row { process: string; readonly Date?: number; async: boolean }',
      'interface Options {',
      '  seed: number',
      '  process: string',
      '}',
      'const row = { process: 1, Date: 2, performance: 3 };',
      'const n = Math.floor(Math.max(a, b) * Math.imul(c, d));',
      "const text = 'Date.now() and process.exit() and import(x)';",
      'const said = "differs from \'subscribe.framework_info.id\'";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text the scanner reads, a template inside a string
      'const msg = `at ${wallTimeMs(ctx)}: Date.now and Math.random`;',
      '// Math.random() in a comment is fine',
      '/* so is setTimeout( in a block comment */',
      'const pattern = /[/\'"]+Date/u; // a regex with quotes and slashes',
      'class C { #process = 0; run() { return this.#process; } }',
    );
    expect(report(scanCore('core/example.ts', good))).toBe('');
  });

  it('reads every kind of import, and no import inside a string or comment', () => {
    const text = lines(
      "import a from './a.js';",
      "import type { B } from './b.js';",
      'import c, { d } from "./c.js";',
      "import * as e from './e.js';",
      "import './side-effect.js';",
      "export * from './f.js';",
      "export * as g from './g.js';",
      "export type { H } from './h.js';",
      'export {',
      '  i,',
      "} from './i.js';",
      "const k = await import('./k.js');",
      'const l = await import(name);',
      "type M = typeof import('./m.js');",
      'const s = "differs from \'subscribe.framework_info.id\'";',
      "// import x from './commented.js';",
      'const meta = import.meta.url;',
      'export const n = 1;',
    );
    expect(importsOf(text).map((ref) => [ref.line, ref.specifier])).toEqual([
      [1, './a.js'],
      [2, './b.js'],
      [3, './c.js'],
      [4, './e.js'],
      [5, './side-effect.js'],
      [6, './f.js'],
      [7, './g.js'],
      [8, './h.js'],
      [9, './i.js'],
      [12, './k.js'],
      [13, undefined],
      [14, './m.js'],
    ]);
  });

  it('holds for src/core', () => {
    const findings = HANDWRITTEN.filter((f) => f.startsWith('core/')).flatMap((f) => scanCore(f, SOURCES.get(f)!));
    expect(findings, report(findings)).toEqual([]);
  });
});

describe('tidy: imports follow the floors, with no circle', () => {
  it('catches imports running up, sideways between siblings, off the picture or out of src', () => {
    const graph: ImportGraph = new Map<string, string[]>([
      ['cli/up.ts', ['../start/cluster.js', '../index.js', 'yargs']],
      ['index.ts', ['./start/cluster.js', './cli/up.js']],
      ['start/cluster.ts', ['../http/master-app.js', '../runtime/driver.js', '../core/cluster.js', 'node:net']],
      ['scenario/runner.ts', ['../client/client.js', '../frameworks/echo.js']],
      ['frameworks/echo.ts', ['../client/client.js', '../wire/json.js']],
      ['http/master-app.ts', ['../runtime/driver.js', '../wire/json.js', '../start/cluster.js']],
      ['runtime/driver.ts', ['../core/cluster.js', '../http/agent-app.js', '../client/client.js']],
      ['client/client.ts', ['../wire/json.js', '../runtime/driver.js']],
      ['wire/json.ts', ['../core/types.js', '../http/replies.js']],
      ['wire/v0/state.ts', ['../json.js', '../../core/master/master.js']],
      ['core/cluster.ts', ['./master/master.js', '../wire/json.js', 'node:fs']],
      ['core/master/master.ts', ['../types.js']],
      ['core/types.ts', ['../../test/helpers.js']],
      ['tools/probe.ts', ['../core/types.js']],
    ]);
    expect(layerViolations(graph)).toEqual([
      'src/client/client.ts -> ../runtime/driver.js (floor 2 -> floor 2)',
      'src/core/cluster.ts -> ../wire/json.js (floor 0 -> floor 1)',
      'src/core/types.ts -> ../../test/helpers.js (floor 0 -> outside src)',
      'src/http/master-app.ts -> ../start/cluster.js (floor 3 -> floor 5)',
      'src/runtime/driver.ts -> ../http/agent-app.js (floor 2 -> floor 3)',
      'src/runtime/driver.ts -> ../client/client.js (floor 2 -> floor 2)',
      'src/scenario/runner.ts -> ../frameworks/echo.js (floor 4 -> floor 4)',
      'src/tools/probe.ts is on no floor of the picture',
      'src/wire/json.ts -> ../http/replies.js (floor 1 -> floor 3)',
    ]);
  });

  it('catches every circle, type-only and self imports included', () => {
    const graph: ImportGraph = new Map<string, string[]>([
      ['core/master/master.ts', ['./calls.js', './framework.js']],
      ['core/master/calls.ts', ['./accept.js', './master.js']],
      ['core/master/accept.ts', ['./master.js']],
      ['core/master/framework.ts', ['../types.js']],
      ['core/types.ts', []],
      ['http/x.ts', ['../wire/a.js', './y.js', 'fastify']],
      ['http/y.ts', ['./z']],
      ['http/z.ts', ['./x.js']],
      ['wire/a.ts', ['./a.js']],
    ]);
    expect(importCycles(graph)).toEqual([
      'src/core/master/accept.ts -> src/core/master/master.ts -> src/core/master/calls.ts -> src/core/master/accept.ts',
      'src/core/master/master.ts -> src/core/master/calls.ts -> src/core/master/master.ts',
      'src/http/x.ts -> src/http/y.ts -> src/http/z.ts -> src/http/x.ts',
      'src/wire/a.ts -> src/wire/a.ts',
    ]);
    const acyclic = new Map([...graph].filter(([file]) => file !== 'core/master/accept.ts' && file !== 'wire/a.ts'));
    acyclic.set('core/master/calls.ts', []);
    acyclic.set('http/z.ts', []);
    expect(importCycles(acyclic)).toEqual([]);
  });

  it('holds for src/', () => {
    const violations = layerViolations(IMPORTS);
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('holds inside src/core, whose rooms have floors of their own', () => {
    const violations = coreLayerViolations(IMPORTS);
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('holds inside src/http, whose servers borrow nothing from each other', () => {
    const violations = httpLayerViolations(IMPORTS);
    expect(violations, violations.join('\n')).toEqual([]);
  });

  it('catches a server of http/ importing another, or the shared root importing a server', () => {
    const graph: ImportGraph = new Map<string, string[]>([
      ['http/agent/app.ts', ['../app.js', '../master/app.js', './binding.js', '../../wire/json.js']],
      ['http/app.ts', ['./errors.js', './sim/part.js']],
      ['http/errors.ts', []],
    ]);
    expect(httpLayerViolations(graph)).toEqual([
      'src/http/agent/app.ts -> ../master/app.js (floor 1 -> floor 1)',
      'src/http/app.ts -> ./sim/part.js (floor 0 -> floor 1)',
    ]);
  });

  it('catches a core room importing a room above it or a sibling', () => {
    const graph: ImportGraph = new Map<string, string[]>([
      ['core/cluster.ts', ['./master/master.js', './kernel/rng.js']],
      ['core/master/master.ts', ['../model/types.js', '../agent/flags.js', '../view.js']],
      ['core/model/types.ts', ['./resources.js', '../kernel/ids.js', '../network/network.js']],
      ['core/kernel/rng.ts', ['../../wire/json.js']],
      ['core/widgets/x.ts', []],
    ]);
    expect(coreLayerViolations(graph)).toEqual([
      'src/core/master/master.ts -> ../agent/flags.js (floor 4 -> floor 4)',
      'src/core/master/master.ts -> ../view.js (floor 4 -> floor 6)',
      'src/core/model/types.ts -> ../network/network.js (floor 1 -> floor 2)',
      'src/core/widgets/x.ts is on no floor of the picture',
    ]);
  });

  it('has no circle in src/', () => {
    const cycles = importCycles(IMPORTS);
    expect(cycles, cycles.join('\n')).toEqual([]);
  });
});

describe(`tidy: functions of at most ${MAX_FUNCTION_LINES} lines`, () => {
  it('measures functions, methods and arrows, and lets one of exactly the limit pass', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = lines(
      `export function long(a: number): { ok: boolean } {\n${body(70)}\n  return { ok: true };\n}`, // lines 1-73
      `class C {\n  method(\n    a: string,\n  ): void {\n${body(67)}\n  }\n}`, // lines 74-146, method from 75
      `const arrow = (x: number) => {\n${body(69)}\n};`, // lines 147-217
      `function fits() {\n${body(68)}\n}`, // lines 218-287: exactly 70
      `function short() {\n${body(3)}\n}`,
      'call(a, () => 1);',
    );
    const findings = scanFunctionLengths('example.ts', text, MAX_FUNCTION_LINES);
    expect(findings.map((f) => [f.line, f.message])).toEqual([
      [1, 'function of 73 lines (at most 70)'],
      [75, 'function of 71 lines (at most 70)'],
      [147, 'function of 71 lines (at most 70)'],
    ]);
  });

  it('holds for src/', () => {
    const findings = HANDWRITTEN.flatMap((f) => scanFunctionLengths(f, SOURCES.get(f)!, MAX_FUNCTION_LINES));
    expect(findings, report(findings)).toEqual([]);
  });
});

describe(`tidy: files of at most ${MAX_FILE_LINES} lines`, () => {
  it('counts lines, a final newline ending the last one', () => {
    const text = (n: number) => 'const x = 1;\n'.repeat(n);
    expect(scanFileLength('a.ts', text(500), MAX_FILE_LINES)).toEqual([]);
    expect(scanFileLength('a.ts', text(500).trimEnd(), MAX_FILE_LINES)).toEqual([]);
    expect(report(scanFileLength('a.ts', text(501), MAX_FILE_LINES))).toBe(
      'src/a.ts:501: file of 501 lines (at most 500)',
    );
    expect(report(scanFileLength('a.ts', `${text(500)}x`, MAX_FILE_LINES))).toBe(
      'src/a.ts:501: file of 501 lines (at most 500)',
    );
  });

  it('holds for src/, the shrinking files held to their own length', () => {
    const findings = HANDWRITTEN.flatMap((f) => scanFileLength(f, SOURCES.get(f)!, SHRINKING.get(f) ?? MAX_FILE_LINES));
    expect(findings, report(findings)).toEqual([]);
  });

  it('lists only files that are still longer than the rule, and that exist', () => {
    const done = [...SHRINKING.keys()].filter(
      (f) => !SOURCES.has(f) || scanFileLength(f, SOURCES.get(f)!, MAX_FILE_LINES).length === 0,
    );
    expect(done, `fit in ${MAX_FILE_LINES} lines now (or are gone): take them off SHRINKING`).toEqual([]);
  });
});

describe('tidy: docs/architecture.md stays true', () => {
  const ARCHITECTURE = readFileSync(join(SRC, '..', 'docs', 'architecture.md'), 'utf8');

  /** The folders of src/, by their path inside it (`core/kernel`). */
  const folders = (dir: string): string[] =>
    readdirSync(dir)
      .sort()
      .filter((name) => statSync(join(dir, name)).isDirectory())
      .flatMap((name) => [relative(SRC, join(dir, name)).split(sep).join('/'), ...folders(join(dir, name))]);

  it('catches a floors table with a room on the wrong floor, a room missing, or a path on no floor', () => {
    const layers = lines(
      '| floor | rooms | |',
      '|---|---|---|',
      '| 5 | `cli/`, `start/`, `index.ts` | the root |',
      '| 4 | `scenario/` · `frameworks/` | |',
      '| 2 | `http/` | |',
      '| 2 | `runtime/` · `client/` | |',
      '| 1 | `wire/` · `tools/` | |',
      '| 0 | `core/` | |',
      '| 6 | `core/*.ts` | the port: `Cluster` |',
      '| 5 | `core/faults/` | |',
      '| 4 | `core/master/` · `core/agent/` | |',
      '| 3 | `core/allocator/` | |',
      '| 2 | `core/network/` · `core/process/` | |',
      '| 1 | `core/model/` | |',
      '| 1 | `http/master/` · `http/agent/` · `http/engine/` | |',
      '| 0 | `http/*.ts` | |',
    );
    expect(floorTableMismatches(layers)).toEqual([
      '`http/` is on floor 3 of src/, the table says 2',
      "`tools/` is in no room of src/'s picture",
      "room 'http' (floor 3 of src/) is in no row",
      "room 'core/kernel' (floor 0 of src/core/) is in no row",
      "room 'http/sim' (floor 1 of src/http/) is in no row",
    ]);
  });

  it('catches a codemap that leaves a folder out', () => {
    const codemap = '### `src/core/`\n- `core/kernel/`: the loop; `src/wire/v0/` and `wire/`';
    expect(unnamedFolders(['core', 'core/kernel', 'core/model', 'wire', 'wire/v0'], codemap)).toEqual(['core/model']);
    expect(markdownSection('# A\n## Codemap\ntext\n### sub\nmore\n## Next\nother', 'Codemap')).toBe(
      'text\n### sub\nmore',
    );
  });

  it('names every folder of src/ in its codemap', () => {
    const codemap = markdownSection(ARCHITECTURE, 'Codemap');
    expect(codemap).not.toBe('');
    expect(unnamedFolders(folders(SRC), codemap)).toEqual([]);
  });

  it('lists the rooms of every picture of the floors, each on its floor', () => {
    const layers = markdownSection(ARCHITECTURE, 'Layers');
    const mismatches = floorTableMismatches(layers);
    expect(mismatches, mismatches.join('\n')).toEqual([]);
  });
});
