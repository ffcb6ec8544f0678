/**
 * The two builds `npm run bench -- compare <ref>` measures: the given commit
 * checked out in a temporary git work tree, its dependencies installed and
 * built with its own build script, and the current work tree built the same
 * way. Each step that fails stops the comparison with its name and the tail
 * of its output; the temporary tree is removed in every case.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { progress } from './stats.js';

/** A step that could not run: the comparison cannot be made. */
export class CompareError extends Error {}

export interface BuiltTree {
  /** The work tree's root. */
  readonly dir: string;
  /** Its built library entry, `dist/index.js`. */
  readonly entry: string;
}

export interface RefTree extends BuiltTree {
  readonly commit: string;
  readonly subject: string;
  /** How its dependencies came: the current node_modules linked, or installed. */
  readonly install: 'linked' | 'npm ci';
}

const TAIL_LINES = 30;
let running: ChildProcess | undefined;

/** Makes `child` the step that Ctrl-C stops (one runs at a time). */
export function trackChild(child: ChildProcess): void {
  running = child;
  child.on('close', () => {
    if (running === child) running = undefined;
  });
}

/** Stops the step running now, if any, and resolves once it has ended: on Ctrl-C, before the tree is removed. */
export function stopRunningStep(): Promise<void> {
  const child = running;
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    // npm goes on writing files for seconds after SIGTERM; after 2 s it is killed outright.
    const kill = setTimeout(() => child.kill('SIGKILL'), 2000);
    const giveUp = setTimeout(resolve, 5000);
    child.once('close', () => {
      clearTimeout(kill);
      clearTimeout(giveUp);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Runs a step with its output on stderr; rejects with the step's name and the tail of its output. */
function runStep(step: string, command: string, args: readonly string[], cwd: string): Promise<void> {
  progress(`${step}: ${command} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(child);
    let output = '';
    const keep = (chunk: Buffer) => {
      process.stderr.write(chunk);
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => reject(new CompareError(`${step}: ${command} could not start: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      const tail = output.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
      reject(
        new CompareError(`${step} failed (${command} ${args.join(' ')}, ${how}); the end of its output:\n${tail}`),
      );
    });
  });
}

function git(cwd: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The root of the current work tree. */
export function currentRoot(): string {
  try {
    return git(process.cwd(), ['rev-parse', '--show-toplevel']);
  } catch {
    throw new CompareError('compare must run inside the clustersim git repository');
  }
}

/** The commit a ref names, and its subject line. */
export function resolveRef(root: string, ref: string): { commit: string; subject: string } {
  let commit: string;
  try {
    commit = git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new CompareError(`'${ref}' names no commit of this repository`);
  }
  return { commit, subject: git(root, ['log', '-1', '--format=%s', commit]) };
}

/**
 * The build command of a tree from its package.json: its own `build` script,
 * or the compiler on tsconfig.build.json for a commit that had none.
 */
export function buildCommand(packageJson: string): readonly [string, readonly string[]] {
  const scripts = (JSON.parse(packageJson) as { scripts?: Record<string, string> }).scripts ?? {};
  return scripts.build === undefined ? ['npx', ['tsc', '-p', 'tsconfig.build.json']] : ['npm', ['run', 'build']];
}

/** The current node_modules can serve the ref only when both lockfiles are byte for byte the same. */
export function canLinkModules(currentLock: Buffer | undefined, refLock: Buffer | undefined): boolean {
  return currentLock !== undefined && refLock !== undefined && currentLock.equals(refLock);
}

function readIfExists(file: string): Buffer | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file) : undefined;
}

async function build(step: string, dir: string): Promise<BuiltTree> {
  const [command, args] = buildCommand(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  await runStep(step, command, args, dir);
  const entry = path.join(dir, 'dist', 'index.js');
  if (!fs.existsSync(entry)) throw new CompareError(`${step}: the build wrote no ${entry}`);
  return { dir, entry };
}

/** Builds the current work tree, uncommitted changes included, into its own dist. */
export function buildCurrent(root: string): Promise<BuiltTree> {
  return build('build the current tree', root);
}

/** A fresh temporary directory for the ref's work tree; `removeRefTree` deletes it. */
export function refTreeDir(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'clustersim-compare-')), 'tree');
}

/** Checks the ref out in `dir` (a new, detached work tree), installs its dependencies and builds it. */
export async function prepareRefTree(root: string, ref: string, dir: string): Promise<RefTree> {
  const { commit, subject } = resolveRef(root, ref);
  await runStep(`check out ${ref}`, 'git', ['worktree', 'add', '--detach', dir, commit], root);
  const modules = path.join(root, 'node_modules');
  const linked =
    fs.existsSync(modules) &&
    canLinkModules(
      readIfExists(path.join(root, 'package-lock.json')),
      readIfExists(path.join(dir, 'package-lock.json')),
    );
  if (linked) {
    progress(`${ref}: the same package-lock.json as the current tree; linking its node_modules`);
    fs.symlinkSync(fs.realpathSync(modules), path.join(dir, 'node_modules'), 'dir');
  } else {
    // No install scripts: the build that follows is the only one (a `prepare` script would build twice).
    await runStep(
      `install the dependencies of ${ref}`,
      'npm',
      ['ci', '--no-audit', '--no-fund', '--ignore-scripts'],
      dir,
    );
  }
  const built = await build(`build ${ref}`, dir);
  return { ...built, commit, subject, install: linked ? 'linked' : 'npm ci' };
}

/** Removes the temporary work tree (a linked node_modules is unlinked first, never followed). Synchronous, for exit paths. */
export function removeRefTree(root: string, dir: string): void {
  const modules = path.join(dir, 'node_modules');
  try {
    if (fs.lstatSync(modules).isSymbolicLink()) fs.unlinkSync(modules);
  } catch {
    // no node_modules yet
  }
  try {
    git(root, ['worktree', 'remove', '--force', dir]);
  } catch {
    // not registered (the checkout failed) or already gone: the directory is removed below
  }
  try {
    fs.rmSync(path.dirname(dir), { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    progress(`could not remove ${path.dirname(dir)}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    git(root, ['worktree', 'prune']);
  } catch {
    // nothing to prune
  }
}
