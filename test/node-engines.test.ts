/**
 * Node versions: the range `engines.node` of package.json declares must be
 * one every installed package supports, so that `npm ci` on any Node of
 * that range prints no `EBADENGINE` warning and runs nothing that its
 * authors ruled out. Each package of the lock file with an `engines.node`
 * range must admit every version of the declared range (`semver.subset`).
 *
 * Optional packages are left out: npm skips an optional package whose
 * engines do not admit the running Node, without a warning, and the package
 * that wants it must do without it (rollup's wasm build lists a native
 * helper only for the newest Node lines this way).
 *
 * The README states the same range.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Semver {
  subset(sub: string, dom: string): boolean;
  validRange(range: string): string | null;
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
}
const semver = createRequire(import.meta.url)('semver') as Semver;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const readJson = (name: string): any => JSON.parse(readFileSync(`${ROOT}${name}`, 'utf8'));

interface LockPackage {
  readonly version?: string;
  readonly optional?: boolean;
  readonly engines?: { readonly node?: string } | readonly string[];
}

/** The packages of a lock file whose `engines.node` leaves out part of `declared`, as `name@version requires range`. */
function enginesNotAdmitting(declared: string, packages: Record<string, LockPackage>): string[] {
  const out: string[] = [];
  for (const [path, pkg] of Object.entries(packages)) {
    if (path === '' || pkg.optional === true) continue;
    const engines = pkg.engines;
    const range = engines !== undefined && !Array.isArray(engines) ? (engines as { node?: string }).node : undefined;
    if (range === undefined) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (semver.validRange(range) === null || !semver.subset(declared, range))
      out.push(`${name}@${pkg.version} requires node ${range}`);
  }
  return out;
}

describe('Node versions', () => {
  const declared: string = readJson('package.json').engines.node;

  it('package.json declares a valid range that the Node running the tests is in', () => {
    expect(semver.validRange(declared)).not.toBeNull();
    expect(semver.satisfies(process.versions.node, declared)).toBe(true);
  });

  it('every package of the lock file supports every Node of the declared range', () => {
    expect(enginesNotAdmitting(declared, readJson('package-lock.json').packages)).toEqual([]);
  });

  it('the check finds a package that wants a newer Node, and one that leaves out a line of the range', () => {
    const lock: Record<string, LockPackage> = {
      '': { version: '0.1.0', engines: { node: '>=1' } },
      'node_modules/fine': { version: '1.0.0', engines: { node: '>=18' } },
      'node_modules/nested/node_modules/cookie': { version: '2.0.2', engines: { node: '>=22' } },
      'node_modules/gap': { version: '3.0.0', engines: { node: '^20.19.0 || >=23' } },
      'node_modules/skipped': { version: '1.5.3', optional: true, engines: { node: '>=25' } },
      'node_modules/old-style': { version: '0.0.1', engines: ['node >= 0.4'] },
    };
    expect(enginesNotAdmitting('^20.19.0 || ^22.12.0 || >=23', lock)).toEqual([
      'cookie@2.0.2 requires node >=22',
      'gap@3.0.0 requires node ^20.19.0 || >=23',
    ]);
  });

  it('the README names the declared range', () => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const floor = semver.minVersion(declared)!.version.replace(/\.0$/, '');
    expect(readme.includes(`\`${declared}\``), `README names \`${declared}\``).toBe(true);
    expect(readme.includes(`${floor} or later`), `README says ${floor} or later`).toBe(true);
  });
});
