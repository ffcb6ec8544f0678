/**
 * The package as users get it: `npm pack`, unpacked where this project's
 * node_modules resolve its dependencies (`.tmp-pack/node_modules/clustersim`),
 * and the examples of `examples/` run against it as a user's project runs
 * them: the vitest example type-checked with tsc against the packed
 * declarations (strict, no `any`, library checks on) and run with vitest,
 * the jest example run with jest (ESM, `--experimental-vm-modules`).
 * Slow: the package is built (into a staging directory, so that dist/
 * stays as other tests find it) and packed.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PACK = path.join(ROOT, '.tmp-pack');
const BIN = (file: string) => path.join(ROOT, 'node_modules', file);

/** The environment without the test runner's own variables, which would steer the runners started here, and without colours. */
function cleanEnv(): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([k]) => !k.startsWith('VITEST') && !k.startsWith('JEST') && k !== 'NODE_ENV' && k !== 'FORCE_COLOR',
  );
  return { ...Object.fromEntries(kept), NO_COLOR: '1' };
}

async function node(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      cwd: PACK,
      env: cleanEnv(),
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

beforeAll(async () => {
  rmSync(PACK, { recursive: true, force: true });
  mkdirSync(PACK, { recursive: true });
  // The package's build, staged beside it rather than in dist/ (which other tests run), then packed as npm packs it.
  const stage = path.join(PACK, 'stage');
  mkdirSync(stage);
  // Every file the package ships besides the build (package.json `files`).
  for (const file of ['package.json', 'README.md', 'LICENSE', 'docs', 'scenarios', 'ui'])
    cpSync(path.join(ROOT, file), path.join(stage, file), { recursive: true });
  await run(
    process.execPath,
    [BIN('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', path.join(stage, 'dist')],
    { cwd: ROOT },
  );
  const { stdout } = await run('npm', ['pack', stage, '--ignore-scripts', '--pack-destination', PACK, '--silent'], {
    cwd: ROOT,
    env: cleanEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
  const tarball = stdout.trim().split('\n').at(-1)!;
  const installed = path.join(PACK, 'node_modules', 'clustersim');
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', path.join(PACK, tarball), '-C', installed, '--strip-components=1']);
  cpSync(path.join(ROOT, 'examples', 'vitest', 'cluster.test.ts'), path.join(PACK, 'cluster.test.ts'));
  cpSync(path.join(ROOT, 'examples', 'jest', 'cluster.test.mjs'), path.join(PACK, 'cluster.test.mjs'));
  writeFileSync(
    path.join(PACK, 'package.json'),
    JSON.stringify({ name: 'user-project', private: true, type: 'module' }),
  );
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  };
  writeFileSync(path.join(PACK, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['cluster.test.ts'] }));
  writeFileSync(path.join(PACK, 'vitest.config.mjs'), "export default { test: { include: ['cluster.test.ts'] } };\n");
  writeFileSync(
    path.join(PACK, 'jest.config.json'),
    JSON.stringify({ testMatch: ['**/cluster.test.mjs'], transform: {} }),
  );
}, 600_000);

describe('the packed package', () => {
  it('exports only what its files hold: the main entry and clustersim/client, with declarations, and the scenarios', () => {
    const manifest = JSON.parse(
      readFileSync(path.join(PACK, 'node_modules', 'clustersim', 'package.json'), 'utf8'),
    ) as { exports: Record<string, { types: string } | string> };
    expect(Object.keys(manifest.exports)).toEqual(['.', './client', './scenarios/*']);
    for (const entry of Object.values(manifest.exports).filter((e) => typeof e !== 'string'))
      expect(() => readFileSync(path.join(PACK, 'node_modules', 'clustersim', entry.types))).not.toThrow();
  });

  it('ships its licence, and source maps that carry their sources', () => {
    const packed = path.join(PACK, 'node_modules', 'clustersim');
    expect(readFileSync(path.join(packed, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
    const map = JSON.parse(readFileSync(path.join(packed, 'dist', 'index.js.map'), 'utf8')) as {
      sources: string[];
      sourcesContent?: string[];
    };
    expect(map.sourcesContent?.[0]).toContain('startCluster');
  });

  it('ships the scenarios and their schema, found through the exported paths, and runs one from a user project', async () => {
    const script = [
      "import { existsSync } from 'node:fs';",
      "import path from 'node:path';",
      "import { runScenarioFile, scenarioSchemaPath, shippedScenariosDir } from 'clustersim';",
      "if (!existsSync(scenarioSchemaPath)) throw new Error('no schema at ' + scenarioSchemaPath);",
      "const result = await runScenarioFile(path.join(shippedScenariosDir, 'steady-state.yaml'));",
      'console.log(result.passed ? "passed" : "failed");',
    ].join('\n');
    writeFileSync(path.join(PACK, 'shipped.mjs'), script);
    const run = await node(['shipped.mjs']);
    expect(run.out.trim(), run.out).toBe('passed');
    const packed = path.join(PACK, 'node_modules', 'clustersim', 'scenarios');
    for (const file of readdirSync(path.join(ROOT, 'scenarios')).filter((f) => f.endsWith('.yaml')))
      expect(existsSync(path.join(packed, file)), file).toBe(true);
  }, 300_000);

  it('ships the README and the docs/ pages it links to (the help names docs/cli.md)', () => {
    const packed = path.join(PACK, 'node_modules', 'clustersim');
    const readme = readFileSync(path.join(packed, 'README.md'), 'utf8');
    const pages = [...readme.matchAll(/\]\((docs\/[a-z-]+\.md)[#)]/g)].map((m) => m[1]!);
    expect(pages).toContain('docs/cli.md');
    for (const page of pages.filter((p) => existsSync(path.join(ROOT, p))))
      expect(existsSync(path.join(packed, page)), page).toBe(true);
  });

  it('type-checks the vitest example against the packed declarations, with no any', async () => {
    const source = readFileSync(path.join(PACK, 'cluster.test.ts'), 'utf8');
    expect(source).not.toMatch(/\bany\b|as unknown|@ts-/);
    expect(source).toMatch(/from 'clustersim\/client'/);
    const tsc = await node([BIN('typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(tsc.out).toBe('');
    expect(tsc.code).toBe(0);
  }, 300_000);

  it('runs the vitest example: a task launched from an offer reaches TASK_FINISHED', async () => {
    const vitest = await node([BIN('vitest/vitest.mjs'), 'run', '--config', './vitest.config.mjs']);
    expect(vitest.out).toMatch(/Tests\s+1 passed/);
    expect(vitest.code, vitest.out).toBe(0);
  }, 300_000);

  it('runs the jest example', async () => {
    const jest = await node(['--experimental-vm-modules', BIN('jest/bin/jest.js'), '--config', 'jest.config.json']);
    expect(jest.out).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(jest.code, jest.out).toBe(0);
  }, 300_000);
});
